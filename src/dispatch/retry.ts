import { StoreError } from '../store/store.js';

/**
 * The retry rules both kinds of upstream share — the model server (model.ts) and the chat
 * providers (providers/http.ts): which HTTP answers are worth trying again, and how long a
 * server asked to be left alone.
 */

/** 408, 429 and 5xx: the server may come back, or asked us to slow down; any other answer would be the same again. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A store failure that passes (a full disk, PostgreSQL restarting): the store logs it itself (store/commit-health.ts). */
export function isStoreDown(err: unknown): boolean {
  return err instanceof StoreError && err.code === 'unavailable';
}
