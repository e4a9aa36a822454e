import { availableParallelism } from 'node:os';
import { realpath } from 'node:fs/promises';
import type { Config } from '../config/types.js';
import type { TransformInput } from '../transform-types.js';
import { resolveTransformModule, type LoadedTransform } from './transform-module.js';
import { createWorkers, type WorkerSetup, type WorkerSpec } from './transform-workers.js';

/** The transforms of one engine, loaded in worker processes. */
export interface TransformPool {
  load(spec: { module: string; export?: string }): LoadedTransform;
  close(): Promise<void>;
}

/** The default pool size: a stuck transform holds one worker until its time-out while the other keeps serving. */
export const DEFAULT_POOL_SIZE = Math.min(2, availableParallelism());

/** The `hooks` settings of the pool: its folder, size and the limits of its workers (CONTRACT.md §8). */
export type PoolSettings = Pick<Config['hooks'], 'transformsDir' | 'transformPoolSize' | 'transformTimeoutMs' | 'transformMaxMemoryMb' | 'maxTextLength'>;

/** How long a worker may take to import the transforms (tsx compiles TypeScript on the way, well under a second per module even on a cold, slow machine). */
const LOAD_TIMEOUT_MS = 30_000;

/** Starts `size` worker processes, each importing every transform; processes, as a thread cannot be stopped inside native code (`execSync`) and one past its heap limit ends the process. */
export async function createTransformPool(specs: readonly { module: string; export?: string }[], hooks: PoolSettings, loadTimeoutMs = LOAD_TIMEOUT_MS): Promise<TransformPool> {
  const loaded = new Map<object, LoadedTransform>();
  const toLoad: WorkerSpec[] = [];
  const byKey = new Map<string, number>();
  const indexOf = new Map<object, number>();
  for (const spec of specs) {
    const resolved = await resolveTransformModule(spec.module, hooks.transformsDir);
    if ('problem' in resolved) {
      loaded.set(spec, { problem: resolved.problem, key: 'module' });
      continue;
    }
    const key = `${spec.export ?? ''}\0${resolved.file}`;
    let i = byKey.get(key);
    if (i === undefined) byKey.set(key, (i = toLoad.push({ file: resolved.file, export: spec.export }) - 1));
    indexOf.set(spec, i);
  }
  if (toLoad.length === 0) return { load: (spec) => loaded.get(spec)!, close: async () => {} };

  const setup: WorkerSetup = { specs: toLoad, dir: await realpath(hooks.transformsDir), maxTextLength: hooks.maxTextLength };
  const workers = createWorkers(setup, hooks.transformPoolSize ?? DEFAULT_POOL_SIZE, hooks.transformTimeoutMs, loadTimeoutMs, hooks.transformMaxMemoryMb);
  const problems = await workers.started;
  for (const [spec, i] of indexOf) loaded.set(spec, problems[i] ?? { fn: (input: TransformInput) => workers.call(i, input) });
  return { load: (spec) => loaded.get(spec)!, close: workers.close };
}
