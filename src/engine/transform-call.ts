import { HookError } from '../errors.js';
import type { TransformInput } from './context.js';
import type { TransformFn } from './transform-module.js';

/** What a transform may return: a partial action (CONTRACT.md §6); unknown keys are ignored. */
export type TransformOverride = Record<string, unknown>;

/**
 * The 500 of a failed template or transform. The message names the mapping and the step
 * only — never payload text (STYLE.md "expose or log"); the original error is kept as
 * `cause` for the log.
 */
export function stepFailed(mappingId: string, step: string, cause: unknown): HookError {
  const err = new HookError('transform_failed', `mapping "${mappingId}": ${step} failed`);
  err.cause = cause;
  return err;
}

/**
 * Calls a preloaded transform, bounded by `timeoutMs` when it returns a promise (a
 * synchronous loop cannot be interrupted in-process). Resolves to the override object,
 * `null` (skip) or `undefined` (no override: the template result stands); anything else,
 * a throw, a rejection or a timeout is `transform_failed`.
 */
export async function callTransform(
  fn: TransformFn,
  input: TransformInput,
  timeoutMs: number,
  mappingId: string,
): Promise<TransformOverride | null | undefined> {
  let result: unknown;
  try {
    result = fn(input);
    if (isThenable(result)) result = await withTimeout(result, timeoutMs);
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

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<unknown>).then === 'function';
}

function withTimeout<T>(promise: PromiseLike<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`transform timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
