import type { Provider } from '../config/types.js';
import { logValue } from '../printable.js';
import type { DeliveryOutcomeRecord, DeliveryRecord, SettleEffects } from '../store/records.js';
import { DeliveryError, retryDelayMs, type BackoffPolicy } from './delivery.js';
import type { ForwardAck } from './forward.js';
import { LAST_RECIPIENT_KEY } from './main-session.js';
import type { OutboxDeps } from './outbox.js';
import { untilStored } from './retry.js';
import { buildSummary } from './summary.js';

export interface RowContext {
  deps: OutboxDeps;
  /** One provider request. */
  timeoutMs: number;
  policy: BackoffPolicy;
}

type PartSender = (part: string, signal: AbortSignal) => Promise<ForwardAck | void>;

const labelOf = (d: DeliveryRecord): Provider | 'forward' | 'callback' => (d.kind === 'forward' || d.kind === 'callback' ? d.kind : d.provider);

const now = (): string => new Date().toISOString();

/** Sends the parts from the first not yet acknowledged, committing each acknowledgement before the next (CONTRACT.md §8). */
export async function attemptRow(ctx: RowContext, d: DeliveryRecord, signal: AbortSignal): Promise<void> {
  const stored = (write: () => Promise<void>) =>
    untilStored(write, signal, ctx.deps.log, { msg: "the delivery's progress", deliveryId: d.id, runId: d.runId });
  const send = senderOf(ctx, d);
  if ('problem' in send) return stored(() => settle(ctx, d, { status: 'failed', at: now(), error: send.problem }));
  let ack: ForwardAck | void = undefined;
  for (let i = d.partsSent; i < d.parts.length; i++) {
    try {
      ack = await send(d.parts[i]!, signal);
    } catch (err) {
      if (signal.aborted) {
        ctx.deps.log.info({ deliveryId: d.id, part: i + 1 }, 'delivery interrupted by shutdown; it resumes at this part after a restart');
        return;
      }
      return failed(ctx, d, i, err, stored);
    }
    await stored(() => ctx.deps.store.ackPart(d.id, i));
  }
  return stored(() => settle(ctx, d, { status: 'delivered', at: now() }, ack));
}

function senderOf({ deps, timeoutMs }: RowContext, d: DeliveryRecord): PartSender | { problem: string } {
  if (d.kind === 'forward') {
    const forward = deps.forwarder;
    if (!forward) return { problem: 'runtime.kind is not forward: there is no upstream to forward to' };
    return (part, signal) => forward(d.path, d.key, part, signal);
  }
  if (d.kind === 'callback') {
    const callback = deps.callbacks;
    if (!callback) return { problem: 'hooks.callbackSecret is not set: there is nothing to sign the callback with' };
    return (part, signal) => callback(d.url, d.runId ?? String(d.id), part, signal);
  }
  const sender = deps.delivery.sender(d.provider);
  if ('problem' in sender) return sender;
  return (part, signal) => sender(d.to, part, { signal, timeoutMs });
}

async function failed(ctx: RowContext, d: DeliveryRecord, part: number, err: unknown, stored: (write: () => Promise<void>) => Promise<void>): Promise<void> {
  const { deps } = ctx;
  const e = err instanceof DeliveryError ? err : undefined;
  if (!e) deps.log.error({ err, deliveryId: d.id }, 'unexpected delivery error');
  const reason = e?.message ?? 'unexpected delivery error';
  const message = d.parts.length > 1 ? `part ${part + 1} of ${d.parts.length}: ${reason}` : reason;
  const fields = { deliveryId: d.id, runId: d.runId, target: logValue(d.target), attempt: d.attempts, error: logValue(message) };
  if (e?.retryable && d.attempts < deps.config.delivery.maxAttempts) {
    const wait = retryDelayMs(d.attempts, e.retryAfterMs, ctx.policy);
    await stored(() => deps.store.retryDelivery(d.id, new Date(Date.now() + wait).toISOString(), message));
    deps.onOutcome?.(labelOf(d), 'retried');
    deps.log.warn({ ...fields, retryInMs: wait }, 'delivery attempt failed; retrying');
    return;
  }
  const error = e?.retryable ? `${message} (gave up after ${d.attempts} attempts)` : message;
  return stored(() => settle(ctx, d, { status: 'failed', at: now(), error }));
}

async function settle({ deps }: RowContext, d: DeliveryRecord, outcome: DeliveryOutcomeRecord, ack?: ForwardAck | void): Promise<void> {
  const effects = await settleEffects(deps, d, outcome, ack);
  await deps.store.settleDelivery(d.id, outcome, effects);
  deps.onOutcome?.(labelOf(d), outcome.status);
  logSettled(deps, d, outcome, ack);
  if (d.runId !== undefined) deps.onRunChanged?.(d.runId);
  if (effects.summary?.wakesNow) deps.onSummary();
}

/** `forward` ends its run (never claimed here); `heartbeat` moves the last recipient; `run` records the delivery and posts the summary. */
async function settleEffects(deps: OutboxDeps, d: DeliveryRecord, outcome: DeliveryOutcomeRecord, ack?: ForwardAck | void): Promise<SettleEffects> {
  const delivered = outcome.status === 'delivered';
  const effects: SettleEffects = {};
  if (d.kind === 'callback') {
    // A callback reports on a run that has ended: settling it changes nothing else.
  } else if (d.kind === 'forward') {
    if (d.runId !== undefined) {
      // No ack: a crash came between the acknowledgement and the settlement; the answer was not kept.
      effects.run = outcome.status === 'delivered'
        ? { status: 'succeeded', endedAt: outcome.at, ...(ack ? { forwarded: ack } : {}) }
        : { status: 'failed', endedAt: outcome.at, error: `forward failed: ${outcome.error}`, errorCode: 'forward_failed' };
    }
  } else if (d.kind === 'heartbeat') {
    // The main session's last recipient is whoever its replies last reached (CONTRACT.md §5).
    if (delivered) effects.state = { [LAST_RECIPIENT_KEY]: JSON.stringify({ provider: d.provider, to: d.to }) };
  } else if (d.runId !== undefined) {
    effects.run = outcome.status === 'delivered'
      ? { deliveredTo: d.target }
      : { error: `delivery failed: ${outcome.error}`, errorCode: 'delivery_failed' };
    const run = await deps.store.getRun(d.runId);
    if (run?.reply !== undefined) {
      const delivery = outcome.status === 'delivered'
        ? { kind: 'delivered' as const, to: d.target }
        : { kind: 'failed' as const, to: d.target, error: { code: 'delivery_failed' as const, message: outcome.error } };
      effects.summary = buildSummary(run, { status: 'succeeded', reply: run.reply, delivery }, deps.clock().toISOString(), deps.config.hooks.mainSummary);
    }
  }
  return effects;
}

function logSettled({ log }: OutboxDeps, d: DeliveryRecord, outcome: DeliveryOutcomeRecord, ack?: ForwardAck | void): void {
  const fields = { deliveryId: d.id, runId: d.runId, target: logValue(d.target), parts: d.parts.length, attempts: d.attempts };
  if (d.kind === 'forward') {
    const upstream = ack ? { upstreamStatus: ack.status, upstreamRunId: logValue(ack.upstreamRunId) } : {};
    if (outcome.status === 'delivered') log.info({ ...fields, key: d.key, ...upstream }, `${d.path} action forwarded`);
    else log.warn({ ...fields, key: d.key, error: logValue(outcome.error) }, `${d.path} action forward failed`);
  } else if (d.kind === 'callback') {
    if (outcome.status === 'delivered') log.info(fields, 'run callback acknowledged');
    else log.warn({ ...fields, error: logValue(outcome.error) }, 'run callback failed');
  } else if (outcome.status === 'delivered') log.info(fields, 'reply delivered');
  else log.warn({ ...fields, error: logValue(outcome.error) }, 'reply delivery failed');
}
