import { EventEmitter, once } from 'node:events';
import type { RunRecord } from '../store/records.js';
import type { Store } from '../store/store.js';

/** Waiting for a run to end (CONTRACT.md §14): notified here, and polled, as another instance may end it. */
export function createRunWaiter(store: Pick<Store, 'getRun'>, pollMs: number) {
  const changed = new EventEmitter().setMaxListeners(0);
  let ended = false;
  return {
    /** Resolves with the run once `done(run)` holds, or undefined after `ms`, at `end`, or when the store cannot be read. */
    async wait(runId: string, ms: number, done: (run: RunRecord) => boolean): Promise<RunRecord | undefined> {
      const deadline = Date.now() + ms;
      for (;;) {
        const run = await store.getRun(runId).catch(() => undefined);
        if (run === undefined) return undefined;
        if (done(run)) return run;
        const left = deadline - Date.now();
        if (ended || left <= 0) return undefined;
        await once(changed, runId, { signal: AbortSignal.timeout(Math.min(pollMs, left)) }).catch(() => {});
        if (ended) return undefined;
      }
    },
    /** Something happened to this run here: its waits look again now. */
    notify(runId: string): void {
      changed.emit(runId);
    },
    /** Ends every wait, now and later (the gateway is stopping). */
    end(): void {
      ended = true;
      // once() listens for 'error' too: only the runs' own events are emitted.
      for (const runId of changed.eventNames().filter((name) => name !== 'error')) changed.emit(runId);
    },
  };
}
