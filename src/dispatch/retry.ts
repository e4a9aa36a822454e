import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { isStoreDown } from '../store/store.js';

/**
 * The retry rules both kinds of upstream share — the model server (model.ts) and the chat
 * providers (providers/http.ts): which HTTP answers are worth trying again, and how long a
 * server asked to be left alone; and the store's writes, tried until they land.
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

/**
 * A store read or write of a polling loop failed (it tries again on its own): an error line,
 * unless the store is down, which the store says itself once every few seconds
 * (store/commit-health.ts) — not once per loop turn.
 */
export function logStoreFailure(log: Logger, err: unknown, msg: string): void {
  if (isStoreDown(err)) log.debug({ err }, msg);
  else log.error({ err }, msg);
}

/**
 * `write` until it lands (CONTRACT.md §8): a store that cannot commit now is tried again, after
 * 0.25 s doubling to 5 s, for as long as the process lives — so an outcome (a run's end, a
 * delivery's progress) is never left half written until a restart. Gives up, rejecting with
 * the store's error, once `stop` is aborted (shutdown: the next start ends what was left), or
 * at once on any other error. `what` names the write in the one warning of a write that had to wait.
 */
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
