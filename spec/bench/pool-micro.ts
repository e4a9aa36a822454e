/**
 * The transform pool's hand-off cost alone, without HTTP: K callers (like the benchmark's
 * connections) each call the bench's `shout.ts` transform N/K times, through the worker pool
 * and in-process, and it prints CPU µs per call (process.cpuUsage counts every thread).
 * Pin it to one core like the bench's server: `taskset -c 0 npx tsx spec/bench/pool-micro.ts`.
 *
 *   options: --calls N (default 200000) --concurrency K (32) --size S (pool size, default DEFAULT_POOL_SIZE)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createTransformPool, DEFAULT_POOL_SIZE } from '../../src/engine/transform-pool.js';
import type { TransformInput } from '../../src/transform-types.js';
import { writeBenchTransforms } from './scenarios.js';

const { values } = parseArgs({ options: { calls: { type: 'string' }, concurrency: { type: 'string' }, size: { type: 'string' } } });
const CALLS = Number(values.calls ?? 200_000);
const K = Number(values.concurrency ?? 32);
const SIZE = Number(values.size ?? DEFAULT_POOL_SIZE);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pool-micro-'));
// The bench's own transform, so that both measure the same call.
writeBenchTransforms(dir);
const file = path.join(dir, 'transforms', 'shout.ts');

/** What the engine passes for the bench's request (transformInput in engine/context.ts). */
const input = (): TransformInput => ({
  payload: JSON.parse('{"word":"hello","from":"bench"}'),
  headers: { host: '127.0.0.1:8080', 'content-type': 'application/json', 'content-length': '31', connection: 'keep-alive' },
  query: {},
  path: 'shout',
  url: '/hooks/shout',
  now: new Date().toISOString(),
});

const tick = () => new Promise<void>((resolve) => setImmediate(resolve)); // a request's I/O turn

async function measure(name: string, fn: (i: TransformInput) => unknown): Promise<void> {
  let left = CALLS;
  const caller = async () => {
    while (left-- > 0) {
      await fn(input());
      await tick();
    }
  };
  await Promise.all(Array.from({ length: K }, caller)); // warm-up round
  left = CALLS;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: K }, caller));
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - t0;
  console.log(`${name.padEnd(10)} ${((used.user + used.system) / CALLS).toFixed(1)} µs CPU per call (user ${(used.user / CALLS).toFixed(1)}, system ${(used.system / CALLS).toFixed(1)}), ${((CALLS / ms) * 1000).toFixed(0)} calls/s`);
}

const mod = (await import(file)) as { default: (i: TransformInput) => unknown };
await measure('in-process', async (i) => mod.default(i));
const spec = { module: 'shout.ts' };
const pool = await createTransformPool([spec], { transformsDir: path.dirname(file), transformPoolSize: SIZE, transformTimeoutMs: 5000, transformMaxMemoryMb: 256, maxTextLength: 262_144 });
const loaded = pool.load(spec);
if (!('fn' in loaded)) throw new Error(loaded.problem);
await measure(`pool of ${SIZE}`, loaded.fn);
await pool.close();
fs.rmSync(dir, { recursive: true });
