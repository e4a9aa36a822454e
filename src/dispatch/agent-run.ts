import { logValue } from '../printable.js';
import type { HistoryMessage, NewDelivery, RunEnd, RunRecord } from '../store/records.js';
import { callbackOf } from './callback.js';
import { resolveTarget } from './delivery.js';
import { forModel } from './fence.js';
import { getLastRecipient, isHeartbeatOk, type MainSessionDeps } from './main-session.js';
import { modelTurn } from './model-turn.js';
import { untilStored } from './retry.js';
import { buildSummary, type DeliveryOutcome, type RunOutcome } from './summary.js';

// Carrying out one claimed agent run (runner.ts claims them): the model turn, where the reply
// goes, and the run's end with its summary.

/**
 * What the runner (runner.ts) and the work of one run need: what a heartbeat turn needs
 * (`onEnqueued` also wakes the sender when a gone instance's rows were released), and
 * `onSummary`.
 */
export interface RunnerDeps extends Omit<MainSessionDeps, 'onTurn'> {
  /** Called after a run with `wakeMode: now` posted its summary: triggers a heartbeat. */
  onSummary: () => void;
  /** Called once a run's end is committed: for those waiting on it (`?wait`, waitForCompletion). */
  onRunEnded?: (runId: string) => void;
}

/**
 * The model turn of a claimed run, then its end: requeued when `stop` aborted the turn (it
 * resumes on the next start), else finished — the reply into the outbox, or the run's outcome.
 * A store that cannot take the history read or the end now is tried again until it does
 * (CONTRACT.md §8), the outcome kept meanwhile: the run never stays `running` for want of a
 * restart, and it holds its place under `agent.maxConcurrent` until its end has landed.
 */
export async function executeRun(deps: RunnerDeps, run: RunRecord, stop: AbortSignal): Promise<void> {
  const { store, log, config: { agent } } = deps;
  const user = forModel(run.message, run.source, run.unsafe);
  // sessionMode isolated (OpenClaw's "fresh run session"): no earlier turn is sent, and this
  // turn does not become part of the session's conversation (finishQueued, finishRun).
  const isolated = run.sessionMode === 'isolated';
  log.info({ runId: run.runId, sessionKey: logValue(run.sessionKey) }, 'run started');
  const stored = <T>(msg: string, write: () => Promise<T>) => untilStored(write, stop, log, { msg, runId: run.runId });
  const result = await stored("the run's history", () => modelTurn({ store, model: deps.model, log }, {
    sessionKey: run.sessionKey,
    historyTurns: isolated ? 0 : agent.historyTurns,
    system: agent.systemPrompt,
    user,
    model: run.model ?? agent.model,
    thinking: run.thinking,
    timeoutSeconds: run.timeoutSeconds ?? agent.timeoutSeconds,
    stop,
  }));
  switch (result.kind) {
    case 'stopped':
      await store.requeueRuns([run.runId]);
      log.info({ runId: run.runId }, 'run requeued at shutdown; it resumes on next start');
      return;
    case 'timed_out':
      return stored("the run's end", () => finishRun(deps, run, { status: 'timed_out', afterSeconds: result.afterSeconds }));
    case 'failed':
      log.warn({ runId: run.runId, errorCode: result.error.code, error: result.error.message }, 'run failed');
      return stored("the run's end", () => finishRun(deps, run, { status: 'failed', error: result.error }));
    case 'reply': {
      const turns = isolated ? undefined : result.turns;
      return stored("the run's end", async () => {
        const plan = await planDelivery(deps, run, result.reply);
        if ('parts' in plan) return finishQueued(deps, run, result.reply, plan, turns);
        return finishRun(deps, run, { status: 'succeeded', reply: result.reply, delivery: plan }, turns);
      });
    }
  }
}

/**
 * Where the reply goes: into the outbox (resolved here, once: `resolveTarget` decides what
 * `last` means at the moment the run ends), or nowhere, and why.
 */
async function planDelivery({ store, config, log, delivery, clock }: RunnerDeps, run: RunRecord, reply: string): Promise<NewDelivery | DeliveryOutcome> {
  if (!run.deliver) return { kind: 'not_requested' };
  if (isHeartbeatOk(reply)) return { kind: 'heartbeat_ok' };
  const needLast = run.provider === 'last' || !run.to;
  const resolved = resolveTarget(run, needLast ? await getLastRecipient(store, config) : undefined);
  if ('problem' in resolved) {
    log.warn({ runId: run.runId, problem: logValue(resolved.problem) }, 'run reply not delivered');
    return { kind: 'failed', error: { code: 'no_recipient', message: resolved.problem } };
  }
  const { provider, to } = resolved.target;
  return { kind: 'run', provider, to, parts: delivery.split(provider, reply), createdAt: clock().toISOString() };
}

/**
 * Ends a succeeded run whose reply is to be delivered: the run and its outbox row in one
 * commit. Its summary waits for the delivery to settle (src/dispatch/outbox-row.ts), so that it
 * says what really happened.
 */
async function finishQueued(deps: RunnerDeps, run: RunRecord, reply: string, delivery: NewDelivery, turns: HistoryMessage[] | undefined): Promise<void> {
  const end: RunEnd = { status: 'succeeded', endedAt: deps.clock().toISOString(), reply };
  await deps.store.finishRun(run.runId, end, { history: turns, delivery, callback: callbackOf(run, end) });
  deps.log.info({ runId: run.runId, status: 'succeeded', target: logValue(`${delivery.provider}:${delivery.to}`) }, 'run finished; reply queued for delivery');
  deps.onEnqueued();
  deps.onRunEnded?.(run.runId);
}

/** One `finishRun`: the end, the summary (per hooks.mainSummary) and, on success, the turn. */
export async function finishRun(deps: RunnerDeps, run: RunRecord, outcome: RunOutcome, turns?: HistoryMessage[]): Promise<void> {
  const endedAt = deps.clock().toISOString();
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
  const summary = buildSummary(run, outcome, endedAt, deps.config.hooks.mainSummary);
  if (summary && run.wakeMode === 'now') summary.wakesNow = true;
  // The callback row is committed with the end it reports (docs/callbacks.md).
  const callback = callbackOf(run, end);
  await deps.store.finishRun(run.runId, end, { summary, history: turns, callback });
  deps.log.info({ runId: run.runId, status: end.status, deliveredTo: logValue(end.deliveredTo) }, 'run finished');
  if (callback) deps.onEnqueued();
  deps.onRunEnded?.(run.runId);
  if (summary && run.wakeMode === 'now') deps.onSummary();
}
