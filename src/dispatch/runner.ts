import type { ClaimRules, RunRecord } from '../store/records.js';
import { StoreError } from '../store/store.js';
import { executeRun, finishRun, type RunnerDeps } from './agent-run.js';
import { logStoreFailure } from './retry.js';

/** Catches runs queued by another path (another process sharing the store, a missed kick). */
const SAFETY_POLL_MS = 2_000;
export const INTERRUPTED = 'interrupted: the gateway stopped while this run was in progress';
const INTERRUPTED_ERROR = { code: 'interrupted', message: INTERRUPTED } as const;

export interface Runner {
  /** Marks runs left `running` by a crash (or by a gone instance) failed; returns how many. Call before {@link start}. */
  recover(): Promise<number>;
  start(): void;
  /** Claims queued runs up to `agent.maxConcurrent`; no claim when each of `sessions` already runs here (one turn per session). */
  kick(sessions?: readonly string[]): void;
  /** Stops claiming; aborts model calls in flight and requeues those runs; a run whose model already answered finishes. */
  stop(): Promise<void>;
}

interface Active {
  sessionKey: string;
  modelCtl: AbortController;
  done: Promise<void>;
}

interface Loop {
  deps: RunnerDeps;
  active: Map<string, Active>;
  stopped: boolean;
  poll: NodeJS.Timeout | undefined;
  sweep: NodeJS.Timeout | undefined;
  recovering: Promise<number> | undefined;
  /** Taken over but not yet ended (the store failed meanwhile): only we retry them. */
  orphans: Map<string, RunRecord>;
  claiming: Promise<void> | undefined;
  kickAgain: boolean;
  rules: () => ClaimRules | undefined;
}

/** `rules`: flow control's, read at each claim. */
export function createRunner(deps: RunnerDeps, rules: () => ClaimRules | undefined = () => undefined): Runner {
  const loop: Loop = {
    deps, active: new Map(), stopped: true, poll: undefined, sweep: undefined,
    recovering: undefined, orphans: new Map(), claiming: undefined, kickAgain: false, rules,
  };
  return {
    kick: (sessions) => kick(loop, sessions),
    recover: () => recover(loop),
    start: () => start(loop),
    stop: () => stop(loop),
  };
}

function kick(loop: Loop, sessions?: readonly string[]): void {
  if (loop.stopped) return;
  if (sessions && sessions.every((s) => isRunningHere(loop, s))) return;
  if (loop.claiming) {
    loop.kickAgain = true;
    return;
  }
  const free = loop.deps.config.agent.maxConcurrent - loop.active.size;
  if (free <= 0) return;
  loop.claiming = claim(loop, free).finally(() => {
    loop.claiming = undefined;
    if (loop.kickAgain) {
      loop.kickAgain = false;
      kick(loop);
    }
  });
}

function isRunningHere(loop: Loop, sessionKey: string): boolean {
  for (const entry of loop.active.values()) if (entry.sessionKey === sessionKey) return true;
  return false;
}

async function claim(loop: Loop, free: number): Promise<void> {
  const { store, log, clock } = loop.deps;
  let runs: RunRecord[];
  try {
    runs = await store.claimRuns(free, clock().toISOString(), loop.rules());
  } catch (err) {
    logStoreFailure(log, err, 'claiming runs failed; the safety poll retries');
    return;
  }
  if (loop.stopped && runs.length > 0) {
    await store.requeueRuns(runs.map((r) => r.runId)).catch((err) => {
      log.error({ err }, 'requeueing runs claimed during stop failed; the next start marks them failed');
    });
    return;
  }
  for (const run of runs) launch(loop, run);
}

function launch(loop: Loop, run: RunRecord): void {
  const entry: Active = { sessionKey: run.sessionKey, modelCtl: new AbortController(), done: Promise.resolve() };
  loop.active.set(run.runId, entry);
  entry.done = executeRun(loop.deps, run, entry.modelCtl.signal)
    .catch((err) => {
      // Its end could not be stored: the run stays `running` and the next start marks it failed.
      loop.deps.log.error({ err, runId: run.runId }, 'run could not be completed');
    })
    .finally(() => {
      loop.active.delete(run.runId);
      kick(loop);
    });
}

function recover(loop: Loop): Promise<number> {
  loop.recovering ??= recoverOnce(loop).finally(() => (loop.recovering = undefined));
  return loop.recovering;
}

async function recoverOnce(loop: Loop): Promise<number> {
  // Failed rather than re-run: the crash may have come after the reply was delivered (docs/design.md).
  const { deps, orphans } = loop;
  let ended = 0;
  for (;;) {
    const { runs, deliveries } = await deps.store.takeOver(100);
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
        deps.log.debug({ runId: run.runId }, 'a gone instance\'s run had already ended');
        continue;
      }
      orphans.delete(run.runId);
      ended++;
      deps.log.warn({ runId: run.runId }, 'run interrupted by a crash marked failed');
    }
  }
}

function start(loop: Loop): void {
  if (!loop.stopped) return;
  loop.stopped = false;
  loop.poll = setInterval(kick, SAFETY_POLL_MS, loop);
  loop.poll.unref();
  loop.sweep = setInterval(() => {
    if (loop.stopped) return;
    recover(loop).catch((err) => logStoreFailure(loop.deps.log, err, 'ending the runs of a gone instance failed; retrying later'));
  }, (loop.deps.config.store.leaseSeconds * 1000) / 3);
  loop.sweep.unref();
  kick(loop);
}

async function stop(loop: Loop): Promise<void> {
  loop.stopped = true;
  clearInterval(loop.poll);
  clearInterval(loop.sweep);
  await loop.claiming;
  await loop.recovering?.catch(() => {});
  for (const entry of loop.active.values()) entry.modelCtl.abort(new Error('gateway stopping'));
  await Promise.all([...loop.active.values()].map((e) => e.done));
}
