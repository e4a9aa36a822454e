import type { RunRecord } from '../store/records.js';
import type { Store } from '../store/store.js';

/** Waiting for a run to end (CONTRACT.md §14): notified here, and polled, as another instance may end it. */
export interface RunWaiter {
  /** Resolves with the run once `done(run)` holds, or undefined after `ms`, at {@link end}, or when the store cannot be read. */
  wait(runId: string, ms: number, done: (run: RunRecord) => boolean): Promise<RunRecord | undefined>;
  /** Something happened to this run here: its waits look again now. */
  notify(runId: string): void;
  /** Ends every wait, now and later (the gateway is stopping). */
  end(): void;
}

export function createRunWaiter(store: Pick<Store, 'getRun'>, pollMs: number): RunWaiter {
  const sleepers = new Map<string, Set<() => void>>();
  let ended = false;

  function sleep(runId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = sleepers.get(runId);
      if (!set) sleepers.set(runId, (set = new Set()));
      const wake = () => {
        clearTimeout(timer);
        set!.delete(wake);
        if (set!.size === 0 && sleepers.get(runId) === set) sleepers.delete(runId);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }

  return {
    async wait(runId, ms, done) {
      const deadline = Date.now() + ms;
      for (;;) {
        const run = await store.getRun(runId).catch(() => undefined);
        if (run === undefined) return undefined;
        if (done(run)) return run;
        const left = deadline - Date.now();
        if (ended || left <= 0) return undefined;
        await sleep(runId, Math.min(pollMs, left));
        if (ended) return undefined;
      }
    },
    notify(runId) {
      for (const wake of [...(sleepers.get(runId) ?? [])]) wake();
    },
    end() {
      ended = true;
      for (const set of [...sleepers.values()]) for (const wake of [...set]) wake();
    },
  };
}
