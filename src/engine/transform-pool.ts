import { availableParallelism } from 'node:os';
import { realpath } from 'node:fs/promises';
import type { TransformInput } from '../transform-types.js';
import { resolveTransformModule, type LoadedTransform } from './transform-module.js';
import type { WorkerSetup, WorkerSpec } from './transform-result.js';
import { createWorkers } from './transform-workers.js';

export type { WorkerSpec } from './transform-result.js';

/** The transforms of one engine, loaded in worker processes. */
export interface TransformPool {
  /** The loaded transform (a function that calls into the pool) or its problem, per mapping spec. */
  load(spec: { module: string; export?: string }): LoadedTransform;
  /** Terminates the workers; calls still in flight fail. */
  close(): Promise<void>;
}

/**
 * The default pool size: a stuck transform holds one worker until its time-out while the
 * other keeps serving, and more threads than cores would not run CPU-bound code faster —
 * each worker costs memory (its own V8 heap and module copies).
 */
export const DEFAULT_POOL_SIZE = Math.min(2, availableParallelism());

/** The limits of the worker processes (CONTRACT.md §8). */
export interface WorkerLimits {
  /** hooks.transformMaxMemoryMb: V8's old-generation heap limit of each worker (`--max-old-space-size`). */
  maxMemoryMb: number;
  /** hooks.maxTextLength: strings of a result are cut just past it before they cross back. */
  maxTextLength: number;
}

const DEFAULT_WORKER_LIMITS: Readonly<WorkerLimits> = Object.freeze({ maxMemoryMb: 256, maxTextLength: 262_144 });

/**
 * How long a worker may take to import the transforms (tsx compiles TypeScript on the way,
 * well under a second per module even on a cold, slow machine): past it, the module being
 * loaded is taken for one that never finishes (a loop at its top level), a config problem
 * of that module, instead of a start-up that hangs without a word.
 */
const LOAD_TIMEOUT_MS = 30_000;

/**
 * Resolves every transform spec inside `transformsDir`, starts `size` worker processes that each
 * import every module once, and waits until they have: a module that does not load, has no
 * function to call, or kills its worker while loading is a problem of that spec, reported by
 * `load` like a resolution problem. No transforms: no workers.
 *
 * Calls run one at a time per worker, in arrival order, so that ending one call never takes
 * another with it: a call that outlives `timeoutMs` (a loop, a promise that never settles,
 * native work such as `execSync`), whose worker dies (`process.exit`, an uncaught error, the
 * heap limit) or sends anything but an answer fails alone, and the worker is replaced; the
 * calls waiting behind it go to the other workers or to the replacement.
 *
 * Workers are processes, not threads: a thread cannot be stopped while it is in native code
 * (`worker.terminate()` waits for `execSync('sleep 5')` to return, and a process exit joins
 * the thread, so SIGTERM hung), and a thread past its `resourceLimits` often takes the whole
 * process down with it (V8's fatal "heap out of memory" when a builtin such as
 * `Array.prototype.fill` allocates past the limit; measured on Node 20 with `new
 * Array(1e8).fill(0)` and a plain `push` loop). SIGKILL to a worker's process group ends it
 * and what it spawned at once, wherever it is, and its memory is the kernel's to take back.
 *
 * Handing a call to a worker is what costs here (on one core it is most of a transform
 * request's CPU): each message wakes the other process's event loop, and a timer per call
 * adds its own work. So calls travel in batches — all those waiting when a worker is idle
 * go to it as one message — and each worker has one lazily re-armed timer instead of one per
 * call. A batch that cannot be serialised (one input holds a BigInt or a cycle) is sent again
 * call by call, so that only the call that cannot be sent fails; the happy path serialises each
 * input once.
 */
export async function createTransformPool(...args: Parameters<typeof startTransformPool>): Promise<TransformPool> {
  return (await startTransformPool(...args)).ready;
}

/**
 * {@link createTransformPool} in two steps: resolves the modules and starts the workers, then
 * returns without waiting for them to load, so that the caller compiles the rest of the
 * config while they start (a worker process takes longer to start than the templates of a
 * hundred mappings to compile).
 */
export async function startTransformPool(
  specs: readonly { module: string; export?: string }[],
  transformsDir: string,
  size: number,
  timeoutMs: number,
  loadTimeoutMs = LOAD_TIMEOUT_MS,
  limits: Partial<WorkerLimits> = {},
): Promise<{ ready: Promise<TransformPool> }> {
  const loaded = new Map<object, LoadedTransform>();
  const toLoad: WorkerSpec[] = [];
  const byKey = new Map<string, number>();
  const indexOf = new Map<object, number>();
  for (const spec of specs) {
    const resolved = await resolveTransformModule(spec.module, transformsDir);
    if ('problem' in resolved) {
      loaded.set(spec, { problem: resolved.problem, key: 'module' });
      continue;
    }
    const key = `${spec.export ?? ''}\0${resolved.file}`;
    let i = byKey.get(key);
    if (i === undefined) byKey.set(key, (i = toLoad.push({ file: resolved.file, export: spec.export }) - 1));
    indexOf.set(spec, i);
  }
  if (toLoad.length === 0) return { ready: Promise.resolve({ load: (spec) => loaded.get(spec)!, close: async () => {} }) };

  const setup: WorkerSetup = { specs: toLoad, dir: await realpath(transformsDir), maxTextLength: limits.maxTextLength ?? DEFAULT_WORKER_LIMITS.maxTextLength };
  const workers = createWorkers(setup, size, timeoutMs, loadTimeoutMs, limits.maxMemoryMb ?? DEFAULT_WORKER_LIMITS.maxMemoryMb);
  const ready = workers.started.then((problems): TransformPool => {
    for (const [spec, i] of indexOf) {
      const problem = problems[i];
      loaded.set(spec, problem ?? { fn: (input: TransformInput) => workers.call(i, input) });
    }
    return { load: (spec) => loaded.get(spec)!, close: workers.close };
  });
  return { ready };
}
