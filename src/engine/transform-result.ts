import { OVERRIDE_KEYS } from '../transform-types.js';

/** One transform a worker loads: the resolved file and the export to pick. */
export interface WorkerSpec {
  file: string;
  export?: string;
}

/** What a worker process is started with (transform-pool.ts → transform-worker.ts). */
export interface WorkerSetup {
  specs: WorkerSpec[];
  dir?: string;
  maxTextLength: number;
}

const CARRIED_KEYS: readonly string[] = ['kind', 'channel', ...OVERRIDE_KEYS];

/** What of a transform's result crosses back to the gateway (run in the worker, before the JSON message home). */
export function carried(result: unknown, maxTextLength: number): unknown {
  if (result === null || result === undefined) return result;
  if (typeof result === 'string') return '';
  if (Array.isArray(result)) return [];
  if (typeof result !== 'object') return faithful(result, 'the result');
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
