import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import type { HistoryMessage, RunEnd, RunRecord, Store } from '../store/store.js';
import { DeliveryError, formatTarget, resolveTarget, type Delivery } from './delivery.js';
import { forModel } from './fence.js';
import { getLastRecipient, isHeartbeatOk } from './main-session.js';
import { describeModelError, type ModelClient } from './model.js';
import { buildSummary, type DeliveryOutcome, type RunOutcome } from './summary.js';

/** Catches runs queued by another path (another process sharing the store, a missed kick). */
export const SAFETY_POLL_MS = 2_000;
/** The error of runs found `running` at start (see {@link Runner.recover}). */
export const INTERRUPTED = 'interrupted: the gateway stopped while this run was in progress';

export interface RunnerDeps {
  store: Store;
  config: Readonly<Config>;
  log: Logger;
  model: ModelClient;
  delivery: Delivery;
  clock: () => Date;
  /** Called after a run with `wakeMode: now` posted its summary: triggers a heartbeat. */
  onSummary: () => void;
}

/** The agent runner: claims queued runs and carries each out (model call, delivery, finish). */
export interface Runner {
  /** Marks runs left `running` by a crash as failed; returns how many. Call before {@link start}. */
  recover(): Promise<number>;
  /** Starts the safety poll and claims what is queued. */
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
   * start); runs already delivering get `graceMs`, then their delivery is aborted and they
   * finish. Resolves when no run of this process is `running` any more.
   */
  stop(graceMs: number): Promise<void>;
}

interface Active {
  sessionKey: string;
  phase: 'model' | 'delivering';
  modelCtl: AbortController;
  deliveryCtl: AbortController;
  done: Promise<void>;
}

/** Creates the runner; nothing happens until {@link Runner.start}. */
export function createRunner(deps: RunnerDeps): Runner {
  const { store, config, log, clock } = deps;
  const agent = config.agent;
  const active = new Map<string, Active>();
  let stopped = true;
  let poll: NodeJS.Timeout | undefined;
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
    const entry: Active = { sessionKey: run.sessionKey, phase: 'model', modelCtl: new AbortController(), deliveryCtl: new AbortController(), done: Promise.resolve() };
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
    const timeoutSeconds = run.timeoutSeconds ?? agent.timeoutSeconds;
    const user = forModel(run.message, run.source, run.unsafe);
    const history = await store.history(run.sessionKey, agent.historyTurns * 2);
    const messages: ChatCompletionMessageParam[] = [
      ...(agent.systemPrompt ? [{ role: 'system' as const, content: agent.systemPrompt }] : []),
      ...history,
      { role: 'user', content: user },
    ];
    const timeoutMs = timeoutSeconds * 1000;
    const timeout = AbortSignal.timeout(timeoutMs);
    log.info({ runId: run.runId, sessionKey: logValue(run.sessionKey) }, 'run started');

    let reply: string;
    try {
      reply = await deps.model.complete({
        model: run.model ?? agent.model,
        messages,
        thinking: run.thinking,
        signal: AbortSignal.any([entry.modelCtl.signal, timeout]),
        timeoutMs,
      });
    } catch (err) {
      if (entry.modelCtl.signal.aborted) {
        await store.requeueRuns([run.runId]);
        log.info({ runId: run.runId }, 'run requeued at shutdown; it resumes on next start');
        return;
      }
      if (timeout.aborted) return finish(run, { status: 'timed_out', afterSeconds: timeoutSeconds });
      const error = describeModelError(err);
      log.warn({ runId: run.runId, error }, 'run failed');
      // The server's own message may quote the prompt: debug level only (STYLE.md "expose or log").
      log.debug({ runId: run.runId, err }, 'model error detail');
      return finish(run, { status: 'failed', error });
    }

    entry.phase = 'delivering';
    const delivery = await deliver(run, reply, entry.deliveryCtl.signal);
    const turns: HistoryMessage[] = [
      { role: 'user', content: user },
      { role: 'assistant', content: reply },
    ];
    await finish(run, { status: 'succeeded', reply, delivery }, turns);
  }

  async function deliver(run: RunRecord, reply: string, signal: AbortSignal): Promise<DeliveryOutcome> {
    if (!run.deliver) return { kind: 'not_requested' };
    if (isHeartbeatOk(reply)) return { kind: 'heartbeat_ok' };
    const needLast = run.provider === 'last' || !run.to;
    const resolved = resolveTarget(run, needLast ? await getLastRecipient(store, config) : undefined);
    if ('problem' in resolved) {
      log.warn({ runId: run.runId, problem: logValue(resolved.problem) }, 'run reply not delivered');
      return { kind: 'failed', error: resolved.problem };
    }
    const to = formatTarget(resolved.target);
    try {
      await deps.delivery.send(resolved.target, reply, signal);
      return { kind: 'delivered', to };
    } catch (err) {
      const error = signal.aborted
        ? 'aborted: the gateway stopped during delivery'
        : err instanceof DeliveryError ? err.message : 'unexpected delivery error';
      log.warn({ runId: run.runId, to: logValue(to), error: logValue(error), err: err instanceof DeliveryError ? undefined : err }, 'run reply delivery failed');
      return { kind: 'failed', to, error };
    }
  }

  /** One `finishRun`: the end, the summary (per hooks.mainSummary) and, on success, the turn. */
  async function finish(run: RunRecord, outcome: RunOutcome, turns?: HistoryMessage[]): Promise<void> {
    const endedAt = clock().toISOString();
    const end: RunEnd = { status: outcome.status, endedAt };
    if (outcome.status === 'succeeded') {
      end.reply = outcome.reply;
      if (outcome.delivery.kind === 'delivered') end.deliveredTo = outcome.delivery.to;
      if (outcome.delivery.kind === 'failed') end.error = `delivery failed: ${outcome.delivery.error}`;
    } else {
      end.error = outcome.status === 'failed' ? outcome.error : `timed out after ${outcome.afterSeconds} s`;
    }
    const summary = buildSummary(run, outcome, endedAt, config.hooks.mainSummary);
    await store.finishRun(run.runId, end, { summary, history: turns });
    log.info({ runId: run.runId, status: end.status, deliveredTo: logValue(end.deliveredTo) }, 'run finished');
    if (summary && run.wakeMode === 'now') deps.onSummary();
  }

  return {
    kick,
    async recover() {
      // Why failed rather than re-run: the crash may have come after the model answered or
      // even after the reply was delivered, so running it again could message the user twice.
      // Failing it posts a summary, which tells the main session (and so the user) what was
      // lost; the sender can retry deliberately. Queued runs never started, so they simply
      // resume, and stop() requeues what it interrupts, so only a crash leads here.
      const seen = new Set<string>();
      for (;;) {
        const stuck = (await store.listRuns({ status: 'running', limit: 100 })).filter((r) => !seen.has(r.runId));
        if (stuck.length === 0) return seen.size;
        for (const run of stuck) {
          seen.add(run.runId);
          await finish(run, { status: 'failed', error: INTERRUPTED });
          log.warn({ runId: run.runId }, 'run interrupted by a crash marked failed');
        }
      }
    },
    start() {
      if (!stopped) return;
      stopped = false;
      poll = setInterval(kick, SAFETY_POLL_MS);
      poll.unref();
      kick();
    },
    async stop(graceMs) {
      stopped = true;
      clearInterval(poll);
      await claiming;
      for (const entry of active.values()) if (entry.phase === 'model') entry.modelCtl.abort(new Error('gateway stopping'));
      const all = Promise.all([...active.values()].map((e) => e.done));
      const late = new Promise<'late'>((resolve) => setTimeout(resolve, graceMs, 'late').unref());
      if ((await Promise.race([all.then(() => 'done' as const), late])) === 'late') {
        for (const entry of active.values()) entry.deliveryCtl.abort(new Error('gateway stopping'));
        await all;
      }
    },
  };
}
