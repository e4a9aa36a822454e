import { OVERRIDE_KEYS } from '../transform-types.js';

/** One transform a worker loads: the resolved file and the export to pick. */
export interface WorkerSpec {
  file: string;
  export?: string;
}

/** What a worker process is started with (transform-pool.ts → transform-worker.ts). */
export interface WorkerSetup {
  specs: WorkerSpec[];
  /** hooks.transformsDir's real path: load errors name files relative to it. */
  dir?: string;
  /** hooks.maxTextLength: strings of a result are cut just past it (see {@link carried}). */
  maxTextLength: number;
}

// The keys callTransform and applyOverride read (transform-types.ts TransformFields).
const CARRIED_KEYS: readonly string[] = ['kind', 'channel', ...OVERRIDE_KEYS];

/**
 * What of a transform's result crosses back to the gateway (run in the worker, before the
 * JSON message home): of an object only the keys an action uses — 13 at most — each string cut
 * to `maxTextLength + 1` characters, so that the validator still sees it is too long and says
 * so (400, naming the field and hooks.maxTextLength) while a 100 MB result never reaches the
 * listener's thread. Anything else keeps its type with no content (an array as `[]`, a string
 * as `''`): callTransform refuses it by its type. Throws on what JSON cannot carry faithfully.
 */
export function carried(result: unknown, maxTextLength: number): unknown {
  if (result === null || result === undefined) return result;
  if (typeof result === 'string') return '';
  if (Array.isArray(result)) return [];
  if (typeof result !== 'object') return faithful(result, 'the result');
  const out: Record<string, unknown> = {};
  for (const key of CARRIED_KEYS) {
    if (!Object.hasOwn(result, key)) continue;
    const value = (result as Record<string, unknown>)[key];
    out[key] = typeof value === 'string' && value.length > maxTextLength ? value.slice(0, maxTextLength + 1) : faithful(value, key);
  }
  return out;
}

/**
 * A value as it is when JSON carries it unchanged; else a TypeError (500 transform_failed),
 * where JSON would quietly turn it into something else: a function or a symbol into nothing
 * (or null, which means "skip" as a result), NaN into null, a BigInt into an exception.
 */
function faithful(value: unknown, what: string): unknown {
  const type = typeof value;
  if (type === 'function' || type === 'symbol' || type === 'bigint' || (type === 'number' && !Number.isFinite(value))) {
    throw new TypeError(`transform returned ${what === 'the result' ? 'a' : `${what}: a`} ${type === 'number' ? String(value) : type}, which cannot be sent back from its worker`);
  }
  return value;
}
