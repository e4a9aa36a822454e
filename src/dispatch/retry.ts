import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { isStoreDown } from '../store/store.js';

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

/** Retry `n` (from 1): `baseMs` doubled each time up to `maxMs`, plus 0–20 % jitter so that many clients spread out. */
export function backoffMs(n: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  return Math.min(baseMs * 2 ** Math.max(0, n - 1), maxMs) * (1 + 0.2 * random());
}

/** A down store says so itself every few seconds (store/commit-health.ts), so a loop logs it at debug, not once per turn. */
export function logStoreFailure(log: Logger, err: unknown, msg: string): void {
  if (isStoreDown(err)) log.debug({ err }, msg);
  else log.error({ err }, msg);
}

/** `write` until it lands (CONTRACT.md §8); gives up once `stop` aborts, or on any error but a down store. */
export async function untilStored<T>(write: () => Promise<T>, stop: AbortSignal, log: Logger, what: { msg: string } & Record<string, unknown>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await write();
    } catch (err) {
      if (!isStoreDown(err) || stop.aborted) throw err;
      const { msg, ...fields } = what;
      if (n === 0) log.warn({ ...fields, error: (err as Error).message }, `${msg} waits for the store; retrying until it lands`);
      await sleep(Math.min(250 * 2 ** n, 5_000), undefined, { signal: stop }).catch(() => {
        throw err;
      });
    }
  }
}
