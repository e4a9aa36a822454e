import type { ClaimRules, RunRecord } from '../store/records.js';
import { StoreError } from '../store/store.js';
import { executeRun, finishRun, type RunnerDeps } from './agent-run.js';
import { logStoreFailure } from './retry.js';

/** Catches runs queued by another path (another process sharing the store, a missed kick). */
const SAFETY_POLL_MS = 2_000;
export const INTERRUPTED = 'interrupted: the gateway stopped while this run was in progress';
const INTERRUPTED_ERROR = { code: 'interrupted', message: INTERRUPTED } as const;

interface Active {
  sessionKey: string;
  modelCtl: AbortController;
  done: Promise<void>;
}

/** `rules`: flow control's, read at each claim. */
export function createRunner(deps: RunnerDeps, rules: () => ClaimRules | undefined = () => undefined) {
  const { store, log } = deps;
  const active = new Map<string, Active>();
  /** Taken over but not yet ended (the store failed meanwhile): only we retry them. */
  const orphans = new Map<string, RunRecord>();
  let stopped = true;
  let poll: NodeJS.Timeout | undefined;
  let sweep: NodeJS.Timeout | undefined;
  let recovering: Promise<number> | undefined;
  let claiming: Promise<void> | undefined;
  let kickAgain = false;

  /** Claims queued runs up to `agent.maxConcurrent`; no claim when each of `sessions` already runs here (one turn per session). */
  function kick(sessions?: readonly string[]): void {
    if (stopped) return;
    if (sessions && sessions.every(isRunningHere)) return;
    if (claiming) {
      kickAgain = true;
      return;
    }
    const free = deps.config.agent.maxConcurrent - active.size;
    if (free <= 0) return;
    claiming = claim(free).finally(() => {
      claiming = undefined;
      if (kickAgain) {
        kickAgain = false;
        kick();
      }
    });
  }

  function isRunningHere(sessionKey: string): boolean {
    for (const entry of active.values()) if (entry.sessionKey === sessionKey) return true;
    return false;
  }

  async function claim(free: number): Promise<void> {
    let runs: RunRecord[];
    try {
      runs = await store.claimRuns(free, deps.clock().toISOString(), rules());
    } catch (err) {
      logStoreFailure(log, err, 'claiming runs failed; the safety poll retries');
      return;
    }
    if (stopped && runs.length > 0) {
      await store.requeueRuns(runs.map((r) => r.runId)).catch((err) => {
        log.error({ err }, 'requeueing runs claimed during stop failed; the next start marks them failed');
      });
      return;
    }
    for (const run of runs) launch(run);
  }

  function launch(run: RunRecord): void {
    const entry: Active = { sessionKey: run.sessionKey, modelCtl: new AbortController(), done: Promise.resolve() };
    active.set(run.runId, entry);
    entry.done = executeRun(deps, run, entry.modelCtl.signal)
      .catch((err) => {
        // Its end could not be stored: the run stays `running` and the next start marks it failed.
        log.error({ err, runId: run.runId }, 'run could not be completed');
      })
      .finally(() => {
        active.delete(run.runId);
        kick();
      });
  }

  /** Marks runs left `running` by a crash (or by a gone instance) failed; returns how many. Call before `start`. */
  function recover(): Promise<number> {
    recovering ??= recoverOnce().finally(() => (recovering = undefined));
    return recovering;
  }

  async function recoverOnce(): Promise<number> {
    // Failed rather than re-run: the crash may have come after the reply was delivered (docs/design.md).
    let ended = 0;
    for (;;) {
      const { runs, deliveries } = await store.takeOver(100);
      for (const run of runs) orphans.set(run.runId, run);
      // Released leases are due already, but our outbox sleeps until its own next due time.
      if (deliveries > 0) deps.onEnqueued();
      if (orphans.size === 0) return ended;
      for (const run of [...orphans.values()]) {
        try {
          await finishRun(deps, run, { status: 'failed', error: INTERRUPTED_ERROR });
        } catch (err) {
          if (!(err instanceof StoreError && err.code === 'run_not_running')) throw err;
          // Ended meanwhile (by its own instance, or by an earlier attempt whose answer was lost).
          orphans.delete(run.runId);
          log.debug({ runId: run.runId }, 'a gone instance\'s run had already ended');
          continue;
        }
        orphans.delete(run.runId);
        ended++;
        log.warn({ runId: run.runId }, 'run interrupted by a crash marked failed');
      }
    }
  }

  return {
    kick,
    recover,
    start() {
      if (!stopped) return;
      stopped = false;
      poll = setInterval(kick, SAFETY_POLL_MS);
      poll.unref();
      sweep = setInterval(() => {
        if (stopped) return;
        recover().catch((err) => logStoreFailure(log, err, 'ending the runs of a gone instance failed; retrying later'));
      }, (deps.config.store.leaseSeconds * 1000) / 3);
      sweep.unref();
      kick();
    },
    /** Stops claiming; aborts model calls in flight and requeues those runs; a run whose model already answered finishes. */
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearInterval(sweep);
      await claiming;
      await recovering?.catch(() => {});
      for (const entry of active.values()) entry.modelCtl.abort(new Error('gateway stopping'));
      await Promise.all([...active.values()].map((e) => e.done));
    },
  };
}
