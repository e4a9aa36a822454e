import type { Logger } from '../log.js';
import type { StoreError } from './store.js';

/** How often, at most, the log says that commits are still failing. */
const LOG_EVERY_MS = 5_000;

/** Whether a store's commits land (CONTRACT.md §8): while they fail, `problem()` says why, and the log says so every few seconds, not once per request. */
export function commitHealth(log: Logger) {
  let problem: string | undefined;
  let failures = 0;
  let unlogged = 0;
  let loggedAt = 0;
  return {
    /** A commit failed for want of the backend (`unavailable`); `why`: the cause, for the senders. */
    failed(err: StoreError, why: string): void {
      failures++;
      unlogged++;
      const now = Date.now();
      if (problem !== undefined && why === problem && now - loggedAt < LOG_EVERY_MS) return;
      // The first line of an outage carries the error itself; the later ones only count.
      log.error({ ...(problem === undefined ? { err } : {}), failures: unlogged }, `store commits are failing: ${why}`);
      problem = why;
      loggedAt = now;
      unlogged = 0;
    },
    /** A commit succeeded: the store is well again. */
    committed(): void {
      if (problem === undefined) return;
      log.info({ failures }, 'store commits succeed again');
      problem = undefined;
      failures = unlogged = 0;
    },
    /** Why commits fail, while they do; undefined once one succeeded. */
    problem: (): string | undefined => problem,
  };
}
