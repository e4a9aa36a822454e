import { setTimeout as sleep } from 'node:timers/promises';
import type { Provider } from '../config/types.js';
import type { DeliveryOutcome } from '../metrics.js';
import { logValue } from '../printable.js';
import type { DeliveryOutcomeRecord, DeliveryRecord, Forwarded, SettleEffects } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { CallbackSender } from './callback.js';
import { retryDelayMs } from './delivery.js';
import type { Forwarder } from './forward.js';
import { LAST_RECIPIENT_KEY, type MainSessionDeps } from './main-session.js';
import { DeliveryError } from './providers/sender.js';
import { logStoreFailure, untilStored } from './retry.js';
import { buildSummary } from './summary.js';

/** Deliveries sent at once; the rest wait their turn in the store. */
const MAX_IN_FLIGHT = 16;
/** The longest a timer sleeps before looking again (setTimeout caps at 2^31 − 1 ms). */
const MAX_SLEEP_MS = 60 * 60 * 1000;
const STORE_RETRY_MS = 5_000;

export interface OutboxDeps extends Pick<MainSessionDeps, 'store' | 'config' | 'log' | 'delivery'> {
  /** Forward mode's sender of `forward` rows; absent, such rows fail. */
  forwarder?: Forwarder;
  /** The sender of `callback` rows; absent (no hooks.callbackSecret), such rows fail. */
  callbacks?: CallbackSender;
  /** A row of this run settled: for those waiting on the run. */
  onRunChanged?: (runId: string) => void;
  /** Time of the summary events; due times use real time (they drive timers). */
  clock: () => Date;
  /** A summary of a run with `wakeMode: now` was posted. */
  onSummary: () => void;
  onOutcome?: (provider: Provider | 'forward' | 'callback', outcome: DeliveryOutcome) => void;
}

/** The durable outbox's sender loop (CONTRACT.md §9): claims due rows when kicked, then sleeps on one timer until the next falls due. */
export function createOutbox(deps: OutboxDeps) {
  const { config, store, log } = deps;
  // Longer than any attempt can take; a restart clears it, so only another instance waits it out.
  const leaseMs = 5 * 60_000 + 4 * Math.max(config.delivery.timeoutSeconds, config.runtime.forward.timeoutSeconds) * 1000;
  const inFlight = new Map<number, { ctl: AbortController; done: Promise<void> }>();
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let pumping: Promise<void> | undefined;
  /** Kicked while a claim was under way: claim again when it ends. */
  let again = false;

  /** Something was enqueued or finished: look for due rows now. Cheap to call often. */
  function kick(): void {
    if (stopped) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = pump().finally(() => {
      pumping = undefined;
      if (again) {
        again = false;
        kick();
      }
    });
  }

  function sleepUntil(at: number): void {
    clearTimeout(timer);
    timer = setTimeout(kick, Math.min(Math.max(0, at - Date.now()), MAX_SLEEP_MS));
    timer.unref();
  }

  async function pump(): Promise<void> {
    const free = MAX_IN_FLIGHT - inFlight.size;
    if (free <= 0) return; // a delivery that ends kicks again
    const now = Date.now();
    let claimed: Awaited<ReturnType<Store['claimDeliveries']>>;
    try {
      claimed = await store.claimDeliveries(new Date(now).toISOString(), free, new Date(now + leaseMs).toISOString());
    } catch (err) {
      logStoreFailure(log, err, 'claiming deliveries failed; retrying shortly');
      sleepUntil(now + STORE_RETRY_MS);
      return;
    }
    // Claimed during stop(): they keep their lease, which the next start clears.
    if (stopped) return;
    for (const d of claimed.deliveries) if (!inFlight.has(d.id)) launch(d);
    if (claimed.nextAt !== undefined) sleepUntil(Date.parse(claimed.nextAt));
  }

  function launch(d: DeliveryRecord): void {
    const ctl = new AbortController();
    const done = attemptRow(deps, d, ctl.signal)
      .catch((err) => {
        // Progress could not be stored: the row stays pending under its lease and is tried again after it.
        log.error({ err, deliveryId: d.id }, 'delivery bookkeeping failed; it is retried later');
      })
      .finally(() => {
        inFlight.delete(d.id);
        kick();
      });
    inFlight.set(d.id, { ctl, done });
  }

  return {
    kick,
    start() {
      if (!stopped) return;
      stopped = false;
      kick();
    },
    /** Stops claiming; deliveries under way get `graceMs`, then are aborted and sent again after a restart. */
    async stop(graceMs: number) {
      stopped = true;
      clearTimeout(timer);
      await pumping;
      const entries = [...inFlight.values()];
      const settled = Promise.all(entries.map((e) => e.done));
      if ((await Promise.race([settled, sleep(graceMs, 'late', { ref: false })])) === 'late') {
        for (const e of entries) e.ctl.abort(new Error('gateway stopping'));
        await settled;
      }
    },
  };
}

type PartSender = (part: string, signal: AbortSignal) => Promise<Forwarded | void>;

const labelOf = (d: DeliveryRecord): Provider | 'forward' | 'callback' => (d.kind === 'forward' || d.kind === 'callback' ? d.kind : d.provider);

const now = (): string => new Date().toISOString();

/** Sends the parts from the first not yet acknowledged, committing each acknowledgement before the next (CONTRACT.md §8). */
async function attemptRow(deps: OutboxDeps, d: DeliveryRecord, signal: AbortSignal): Promise<void> {
  const stored = (write: () => Promise<void>) =>
    untilStored(write, signal, deps.log, { msg: "the delivery's progress", deliveryId: d.id, runId: d.runId });
  const send = senderOf(deps, d);
  if ('problem' in send) return stored(() => settle(deps, d, { status: 'failed', at: now(), error: send.problem }));
  let ack: Forwarded | void = undefined;
  for (let i = d.partsSent; i < d.parts.length; i++) {
    try {
      ack = await send(d.parts[i]!, signal);
    } catch (err) {
      if (signal.aborted) {
        deps.log.info({ deliveryId: d.id, part: i + 1 }, 'delivery interrupted by shutdown; it resumes at this part after a restart');
        return;
      }
      return failed(deps, d, i, err, stored);
    }
    await stored(() => deps.store.ackPart(d.id, i));
  }
  return stored(() => settle(deps, d, { status: 'delivered', at: now() }, ack));
}

function senderOf(deps: OutboxDeps, d: DeliveryRecord): PartSender | { problem: string } {
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
  return (part, signal) => sender(d.to, part, { signal, timeoutMs: deps.config.delivery.timeoutSeconds * 1000 });
}

async function failed(deps: OutboxDeps, d: DeliveryRecord, part: number, err: unknown, stored: (write: () => Promise<void>) => Promise<void>): Promise<void> {
  const e = err instanceof DeliveryError ? err : undefined;
  if (!e) deps.log.error({ err, deliveryId: d.id }, 'unexpected delivery error');
  const reason = e?.message ?? 'unexpected delivery error';
  const message = d.parts.length > 1 ? `part ${part + 1} of ${d.parts.length}: ${reason}` : reason;
  const fields = { deliveryId: d.id, runId: d.runId, target: logValue(d.target), attempt: d.attempts, error: logValue(message) };
  if (e?.retryable && d.attempts < deps.config.delivery.maxAttempts) {
    const wait = retryDelayMs(d.attempts, e.retryAfterMs, { maxDelayMs: deps.config.delivery.maxDelaySeconds * 1000 });
    await stored(() => deps.store.retryDelivery(d.id, new Date(Date.now() + wait).toISOString(), message));
    deps.onOutcome?.(labelOf(d), 'retried');
    deps.log.warn({ ...fields, retryInMs: wait }, 'delivery attempt failed; retrying');
    return;
  }
  const error = e?.retryable ? `${message} (gave up after ${d.attempts} attempts)` : message;
  return stored(() => settle(deps, d, { status: 'failed', at: now(), error }));
}

async function settle(deps: OutboxDeps, d: DeliveryRecord, outcome: DeliveryOutcomeRecord, ack?: Forwarded | void): Promise<void> {
  const effects = await settleEffects(deps, d, outcome, ack);
  await deps.store.settleDelivery(d.id, outcome, effects);
  deps.onOutcome?.(labelOf(d), outcome.status);
  logSettled(deps, d, outcome, ack);
  if (d.runId !== undefined) deps.onRunChanged?.(d.runId);
  if (effects.summary?.wakesNow) deps.onSummary();
}

/** `forward` ends its run (never claimed here); `heartbeat` moves the last recipient; `run` records the delivery and posts the summary. */
async function settleEffects(deps: OutboxDeps, d: DeliveryRecord, outcome: DeliveryOutcomeRecord, ack?: Forwarded | void): Promise<SettleEffects> {
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

function logSettled({ log }: OutboxDeps, d: DeliveryRecord, outcome: DeliveryOutcomeRecord, ack?: Forwarded | void): void {
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
