import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import type { HistoryMessage, NewDelivery, RunEnd, RunRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { resolveTarget, type Delivery } from './delivery.js';
import { forModel } from './fence.js';
import { getLastRecipient, isHeartbeatOk } from './main-session.js';
import type { ModelClient } from './model.js';
import { modelTurn } from './model-turn.js';
import { buildSummary, type DeliveryOutcome, type RunOutcome } from './summary.js';

/** Catches runs queued by another path (another process sharing the store, a missed kick). */
export const SAFETY_POLL_MS = 2_000;
/** The error of runs found `running` at start (see {@link Runner.recover}). */
export const INTERRUPTED = 'interrupted: the gateway stopped while this run was in progress';
const INTERRUPTED_ERROR = { code: 'interrupted', message: INTERRUPTED } as const;

export interface RunnerDeps {
  store: Store;
  config: Readonly<Config>;
  log: Logger;
  model: ModelClient;
  delivery: Delivery;
  clock: () => Date;
  /** Called after a run with `wakeMode: now` posted its summary: triggers a heartbeat. */
  onSummary: () => void;
  /** Called after a run's reply was put into the outbox, or a gone instance's rows were released: wakes the sender. */
  onEnqueued: () => void;
}

/** The agent runner: claims queued runs and carries each out (model call, finish, reply into the outbox). */
export interface Runner {
  /**
   * Marks runs left `running` by a crash as failed (those the store hands over:
   * `takeOver`, the runs of a gone instance) and kicks the outbox when the deliveries it
   * had leased were released; returns how many runs. Call before {@link start};
   * start() repeats it every third of `store.leaseSeconds` (another instance may die).
   */
  recover(): Promise<number>;
  /** Starts the safety poll, the periodic recovery, and claims what is queued. */
  start(): void;
  /**
   * Claims queued runs up to `agent.maxConcurrent` running at once; cheap to call often.
   * `sessions`: the sessions of the runs just queued — when this runner is already running
   * a run in each of them, none of those runs can start yet (one turn at a time per session)
   * and no claim is made: a burst into one busy session would otherwise claim per request,
   * each claim walking that session's whole queue. The run that ends kicks again.
   */
  kick(sessions?: readonly string[]): void;
  /**
   * Stops claiming; aborts model calls in flight and requeues those runs (resumed on next
   * start); a run whose model already answered finishes. Resolves when no run of this process
   * is `running` any more.
   */
  stop(): Promise<void>;
}

interface Active {
  sessionKey: string;
  modelCtl: AbortController;
  done: Promise<void>;
}

/** Creates the runner; nothing happens until {@link Runner.start}. */
export function createRunner(deps: RunnerDeps): Runner {
  const { store, config, log, clock } = deps;
  const agent = config.agent;
  const active = new Map<string, Active>();
  let stopped = true;
  let poll: NodeJS.Timeout | undefined;
  let sweep: NodeJS.Timeout | undefined;
  let recovering: Promise<number> | undefined;
  /** Taken over but not yet ended (the store failed meanwhile): they are ours now, so only we retry them. */
  const orphans = new Map<string, RunRecord>();
  let claiming: Promise<void> | undefined;
  let kickAgain = false;

  function kick(sessions?: readonly string[]): void {
    if (stopped) return;
    if (sessions && sessions.every(isRunningHere)) return;
    if (claiming) {
      kickAgain = true;
      return;
    }
    const free = agent.maxConcurrent - active.size;
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
      runs = await store.claimRuns(free, clock().toISOString());
    } catch (err) {
      log.error({ err }, 'claiming runs failed; the safety poll retries');
      return;
    }
    if (stopped && runs.length > 0) {
      // stop() arrived while the claim was in flight: hand them straight back.
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
    entry.done = execute(run, entry)
      .catch((err) => {
        // A store failure: the run stays `running` and start() marks it failed after a restart.
        log.error({ err, runId: run.runId }, 'run could not be completed');
      })
      .finally(() => {
        active.delete(run.runId);
        kick();
      });
  }

  async function execute(run: RunRecord, entry: Active): Promise<void> {
    const user = forModel(run.message, run.source, run.unsafe);
    log.info({ runId: run.runId, sessionKey: logValue(run.sessionKey) }, 'run started');
    const result = await modelTurn({ store, model: deps.model, log }, {
      sessionKey: run.sessionKey,
      historyTurns: agent.historyTurns,
      system: agent.systemPrompt,
      user,
      model: run.model ?? agent.model,
      thinking: run.thinking,
      timeoutSeconds: run.timeoutSeconds ?? agent.timeoutSeconds,
      stop: entry.modelCtl.signal,
    });
    switch (result.kind) {
      case 'stopped':
        await store.requeueRuns([run.runId]);
        log.info({ runId: run.runId }, 'run requeued at shutdown; it resumes on next start');
        return;
      case 'timed_out':
        return finish(run, { status: 'timed_out', afterSeconds: result.afterSeconds });
      case 'failed':
        log.warn({ runId: run.runId, errorCode: result.error.code, error: result.error.message }, 'run failed');
        return finish(run, { status: 'failed', error: result.error });
      case 'reply': {
        const plan = await planDelivery(run, result.reply);
        if ('parts' in plan) return finishQueued(run, result.reply, plan, result.turns);
        return finish(run, { status: 'succeeded', reply: result.reply, delivery: plan }, result.turns);
      }
    }
  }

  /**
   * Where the reply goes: into the outbox (resolved here, once: `resolveTarget` decides what
   * `last` means at the moment the run ends), or nowhere, and why.
   */
  async function planDelivery(run: RunRecord, reply: string): Promise<NewDelivery | DeliveryOutcome> {
    if (!run.deliver) return { kind: 'not_requested' };
    if (isHeartbeatOk(reply)) return { kind: 'heartbeat_ok' };
    const needLast = run.provider === 'last' || !run.to;
    const resolved = resolveTarget(run, needLast ? await getLastRecipient(store, config) : undefined);
    if ('problem' in resolved) {
      log.warn({ runId: run.runId, problem: logValue(resolved.problem) }, 'run reply not delivered');
      return { kind: 'failed', error: { code: 'no_recipient', message: resolved.problem } };
    }
    const { provider, to } = resolved.target;
    return { kind: 'run', provider, to, parts: deps.delivery.split(provider, reply), createdAt: clock().toISOString() };
  }

  /**
   * Ends a succeeded run whose reply is to be delivered: the run and its outbox row in one
   * commit. Its summary waits for the delivery to settle (src/dispatch/outbox.ts), so that it
   * says what really happened.
   */
  async function finishQueued(run: RunRecord, reply: string, delivery: NewDelivery, turns: HistoryMessage[]): Promise<void> {
    await store.finishRun(run.runId, { status: 'succeeded', endedAt: clock().toISOString(), reply }, { history: turns, delivery });
    log.info({ runId: run.runId, status: 'succeeded', target: logValue(`${delivery.provider}:${delivery.to}`) }, 'run finished; reply queued for delivery');
    deps.onEnqueued();
  }

  /** One `finishRun`: the end, the summary (per hooks.mainSummary) and, on success, the turn. */
  async function finish(run: RunRecord, outcome: RunOutcome, turns?: HistoryMessage[]): Promise<void> {
    const endedAt = clock().toISOString();
    const end: RunEnd = { status: outcome.status, endedAt };
    if (outcome.status === 'succeeded') {
      end.reply = outcome.reply;
      if (outcome.delivery.kind === 'failed') {
        end.error = `delivery failed: ${outcome.delivery.error.message}`;
        end.errorCode = outcome.delivery.error.code;
      }
    } else if (outcome.status === 'failed') {
      end.error = outcome.error.message;
      end.errorCode = outcome.error.code;
    } else {
      end.error = `timed out after ${outcome.afterSeconds} s`;
      end.errorCode = 'model_timeout';
    }
    const summary = buildSummary(run, outcome, endedAt, config.hooks.mainSummary);
    if (summary && run.wakeMode === 'now') summary.wakesNow = true;
    await store.finishRun(run.runId, end, { summary, history: turns });
    log.info({ runId: run.runId, status: end.status, deliveredTo: logValue(end.deliveredTo) }, 'run finished');
    if (summary && run.wakeMode === 'now') deps.onSummary();
  }

  async function recoverOnce(): Promise<number> {
    // Why failed rather than re-run: the crash may have come after the model answered or
    // even after the reply was delivered, so running it again could message the user twice.
    // Failing it posts a summary, which tells the main session (and so the user) what was
    // lost; the sender can retry deliberately. Queued runs never started, so they simply
    // resume, and stop() requeues what it interrupts, so only a crash leads here.
    let ended = 0;
    for (;;) {
      const { runs, deliveries } = await store.takeOver(100);
      for (const run of runs) orphans.set(run.runId, run);
      // Released leases: our outbox sleeps until its next known due time, which these rows
      // (due since, and leased far beyond it) never set. Without this they waited out the
      // gone instance's lease: minutes.
      if (deliveries > 0) deps.onEnqueued();
      if (orphans.size === 0) return ended;
      for (const run of [...orphans.values()]) {
        await finish(run, { status: 'failed', error: INTERRUPTED_ERROR });
        orphans.delete(run.runId);
        ended++;
        log.warn({ runId: run.runId }, 'run interrupted by a crash marked failed');
      }
    }
  }

  return {
    kick,
    recover() {
      recovering ??= recoverOnce().finally(() => (recovering = undefined));
      return recovering;
    },
    start() {
      if (!stopped) return;
      stopped = false;
      poll = setInterval(kick, SAFETY_POLL_MS);
      poll.unref();
      sweep = setInterval(() => {
        if (stopped) return;
        recovering ??= recoverOnce().finally(() => (recovering = undefined));
        recovering.catch((err) => log.error({ err }, 'ending the runs of a gone instance failed; retrying later'));
      }, (config.store.leaseSeconds * 1000) / 3);
      sweep.unref();
      kick();
    },
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
