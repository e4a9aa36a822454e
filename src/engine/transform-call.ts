import { HookError } from '../errors.js';
import type { TransformInput } from '../transform-types.js';
import type { TransformFn } from './transform-module.js';

/** A transform's result as the engine receives it. */
export type TransformOverride = Record<string, unknown>;

/** The 500 of a failed template or transform: names the mapping and the step, never payload text (STYLE.md "expose or log"); the error is its `cause`. */
export function stepFailed(mappingId: string, step: string, cause: unknown): HookError {
  const err = new HookError('transform_failed', `mapping "${mappingId}": ${step} failed`);
  err.cause = cause;
  return err;
}

/** Calls a loaded transform (transform-pool.ts runs it in a worker, bounded by `hooks.transformTimeoutMs`). */
export async function callTransform(fn: TransformFn, input: TransformInput, mappingId: string): Promise<TransformOverride | null | undefined> {
  let result: unknown;
  try {
    result = await fn(input);
  } catch (cause) {
    throw stepFailed(mappingId, 'transform', cause);
  }
  if (result === null || result === undefined) return result;
  if (typeof result !== 'object' || Array.isArray(result)) {
    const kind = Array.isArray(result) ? 'an array' : `a ${typeof result}`;
    throw stepFailed(mappingId, 'transform', new TypeError(`transform returned ${kind}; expected an object, null or undefined`));
  }
  return result as TransformOverride;
}
