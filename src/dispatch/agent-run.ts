import { logValue } from '../printable.js';
import type { HistoryMessage, NewDelivery, RunEnd, RunRecord } from '../store/records.js';
import { callbackOf } from './callback.js';
import { resolveTarget } from './delivery.js';
import { forModel } from './fence.js';
import { getLastRecipient, isHeartbeatOk, type MainSessionDeps } from './main-session.js';
import { modelTurn } from './model.js';
import { untilStored } from './retry.js';
import { buildSummary, type DeliveryOutcome, type RunOutcome } from './summary.js';

export interface RunnerDeps extends Omit<MainSessionDeps, 'onTurn'> {
  /** A run with `wakeMode: now` posted its summary. */
  onSummary: () => void;
  /** A run's end is committed: for those waiting on it. */
  onRunEnded?: (runId: string) => void;
}

/** A claimed run's model turn, then its end, written until it lands (CONTRACT.md §8); requeued when `stop` aborted the turn. */
export async function executeRun(deps: RunnerDeps, run: RunRecord, stop: AbortSignal): Promise<void> {
  const { store, log, config: { agent } } = deps;
  const user = forModel(run.message, run.source, run.unsafe);
  // Isolated (OpenClaw's "fresh run session"): no earlier turn is sent and this one is not kept.
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
      return stored("the run's end", () => finishRun(deps, run, { status: 'timed_out', afterSeconds: result.afterSeconds, error: result.error }));
    case 'failed':
      log.warn({ runId: run.runId, errorCode: result.error.code, error: result.error.message }, 'run failed');
      return stored("the run's end", () => finishRun(deps, run, { status: 'failed', error: result.error }));
    case 'reply': {
      const turns = isolated ? undefined : result.turns;
      return stored("the run's end", async () => {
        const delivery = await planDelivery(deps, run, result.reply);
        return finishRun(deps, run, { status: 'succeeded', reply: result.reply, delivery }, turns);
      });
    }
  }
}

/** A succeeded run's delivery may be a row to queue. */
type RunEnding = Exclude<RunOutcome, { status: 'succeeded' }> | { status: 'succeeded'; reply: string; delivery: DeliveryOutcome | NewDelivery };

/** `last` is resolved once, at the moment the run ends. */
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

/** A reply to deliver is queued in the run's commit; its summary then waits for the delivery to settle, so that it says what really happened. */
export async function finishRun(deps: RunnerDeps, run: RunRecord, outcome: RunEnding, turns?: HistoryMessage[]): Promise<void> {
  const endedAt = deps.clock().toISOString();
  const end: RunEnd = { status: outcome.status, endedAt };
  const queued = outcome.status === 'succeeded' && 'parts' in outcome.delivery ? outcome.delivery : undefined;
  if (outcome.status === 'succeeded') {
    end.reply = outcome.reply;
    if (outcome.delivery.kind === 'failed') {
      end.error = `delivery failed: ${outcome.delivery.error.message}`;
      end.errorCode = outcome.delivery.error.code;
    }
  } else {
    end.error = outcome.error.message;
    end.errorCode = outcome.error.code;
  }
  const summary = queued ? undefined : buildSummary(run, outcome as RunOutcome, endedAt, deps.config.hooks.mainSummary);
  const callback = callbackOf(run, end);
  await deps.store.finishRun(run.runId, end, { summary, history: turns, delivery: queued, callback });
  if (queued) deps.log.info({ runId: run.runId, status: end.status, target: logValue(`${queued.provider}:${queued.to}`) }, 'run finished; reply queued for delivery');
  else deps.log.info({ runId: run.runId, status: end.status }, 'run finished');
  if (callback || queued) deps.onEnqueued();
  deps.onRunEnded?.(run.runId);
  if (summary?.wakesNow) deps.onSummary();
}
