import { importModule, pickExport, type LoadedTransform, type TransformFn } from './transform-module.js';
import { OVERRIDE_KEYS } from '../transform-types.js';
import type { WorkerSetup } from './transform-workers.js';

const send = process.send!.bind(process);
const setup = JSON.parse(process.argv[2]!) as WorkerSetup;
const { specs, maxTextLength, dir } = setup;

process.on('disconnect', () => process.exit(0));
process.on('uncaughtException', (err) => {
  const message = err instanceof Error ? err.message : String(err);
  try {
    send(['crash', message], () => process.exit(1));
  } catch {
    process.exit(1);
  }
  setTimeout(() => process.exit(1), 1000).unref();
});

// Each spec's function, or the problem it had loading (its calls fail with it).
const fns: (TransformFn | string)[] = [];
void load().then((problems) => send(['ready', problems]));

async function load(): Promise<(Exclude<LoadedTransform, { fn: TransformFn }> | null)[]> {
  const problems: (Exclude<LoadedTransform, { fn: TransformFn }> | null)[] = [];
  const modules = new Map<string, Promise<Record<string, unknown>>>();
  for (const [i, { file, export: name }] of specs.entries()) {
    send(['loading', i]);
    let loading = modules.get(file);
    if (!loading) modules.set(file, (loading = importModule(file, dir)));
    let picked: ReturnType<typeof pickExport>;
    let key: 'module' | 'export' = name !== undefined ? 'export' : 'module';
    try {
      picked = pickExport(await loading, name);
    } catch (err) {
      picked = { problem: (err as Error).message };
      key = 'module';
    }
    problems.push('problem' in picked ? { problem: picked.problem, key } : null);
    fns.push('problem' in picked ? picked.problem : picked.fn);
  }
  return problems;
}

let pending: unknown[] = [];
let next = 0;
let seq = 0;
let running = false;
process.on('message', (batch: unknown[]) => {
  pending.push(...batch);
  if (!running) void run();
});

async function run(): Promise<void> {
  running = true;
  while (next < pending.length) {
    const spec = pending[next] as number;
    const input = pending[next + 1];
    next += 2;
    const id = seq++;
    try {
      const fn = fns[spec];
      if (typeof fn !== 'function') throw new Error(fn);
      const value = carried(await fn(input as never), maxTextLength);
      send(value === undefined ? [id, true] : [id, true, value]);
    } catch (err) {
      send([id, false, describe(err)]);
    }
  }
  pending = []; // not holding on to the inputs
  next = 0;
  running = false;
}

function describe(err: unknown): { name: string; message: string; stack?: string } {
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { name: 'Error', message: `transform threw ${typeof err === 'string' ? err : typeof err}` };
}

const CARRIED_KEYS: readonly string[] = ['kind', 'channel', ...OVERRIDE_KEYS];

/** What of a transform's result crosses back to the gateway (run in the worker, before the JSON message home). */
export function carried(result: unknown, maxTextLength: number): unknown {
  if (result === null || result === undefined) return result;
  if (typeof result !== 'object' || Array.isArray(result)) {
    faithful(result, 'the result');
    throw new TypeError(`transform returned ${Array.isArray(result) ? 'an array' : `a ${typeof result}`}; expected an object, null or undefined`);
  }
  const out: Record<string, unknown> = {};
  for (const key of CARRIED_KEYS) {
    if (!Object.hasOwn(result, key)) continue;
    const value = (result as Record<string, unknown>)[key];
    // One character past the limit: the validator still says it is too long, naming the field.
    out[key] = typeof value === 'string' && value.length > maxTextLength ? value.slice(0, maxTextLength + 1) : faithful(value, key);
  }
  return out;
}

/** A value as it is when JSON carries it unchanged; else a TypeError (500 transform_failed), where JSON would quietly turn it into something else. */
function faithful(value: unknown, what: string): unknown {
  const type = typeof value;
  if (type === 'function' || type === 'symbol' || type === 'bigint' || (type === 'number' && !Number.isFinite(value))) {
    throw new TypeError(`transform returned ${what === 'the result' ? 'a' : `${what}: a`} ${type === 'number' ? String(value) : type}, which cannot be sent back from its worker`);
  }
  return value;
}
