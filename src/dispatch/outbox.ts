import type { Config, Provider } from '../config/types.js';
import type { DeliveryOutcome } from '../metrics.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import type { DeliveryOutcomeRecord, DeliveryRecord, SettleEffects } from '../store/records.js';
import type { Store } from '../store/store.js';
import { DeliveryError, retryDelayMs, type Delivery } from './delivery.js';
import type { ForwardAck, Forwarder } from './forward.js';
import { stopWithGrace } from './grace.js';
import { LAST_RECIPIENT_KEY } from './main-session.js';
import { buildSummary } from './summary.js';

/** Deliveries sent at once (each its parts in order); the rest wait their turn in the store. */
export const MAX_IN_FLIGHT = 16;
/** The longest a timer sleeps before looking again (setTimeout caps at 2^31 − 1 ms). */
const MAX_SLEEP_MS = 60 * 60 * 1000;
/** After a store failure, the loop looks again this much later. */
const STORE_RETRY_MS = 5_000;

export interface OutboxDeps {
  store: Store;
  config: Readonly<Config>;
  log: Logger;
  delivery: Delivery;
  /** Forward mode: the sender of `forward` rows (undefined: such rows fail, there is no upstream). */
  forwarder?: Forwarder;
  /** Time of the summary events. Due times use real time (they drive timers). */
  clock: () => Date;
  /** Jitter source, uniform in [0, 1) (specs inject it). */
  random?: () => number;
  /** Called after a summary of a run with `wakeMode: now` was posted: triggers a heartbeat. */
  onSummary: () => void;
  /**
   * Called with each row's outcome once committed: settled, or put back for a retry (metrics).
   * `provider`: the reply's provider, or `forward` for a forward row (forward mode).
   */
  onOutcome?: (provider: Provider | 'forward', outcome: DeliveryOutcome) => void;
}

/** The metrics label of a row: its provider, or `forward`. */
const labelOf = (d: DeliveryRecord): Provider | 'forward' => (d.kind === 'forward' ? 'forward' : d.provider);

/** The sender loop of the durable outbox (CONTRACT.md §9). */
export interface Outbox {
  /** Starts working off what is due (pending rows of an earlier process included). */
  start(): void;
  /** Something was enqueued or finished: look for due rows now. Cheap to call often. */
  kick(): void;
  /**
   * Stops claiming; deliveries under way get `graceMs` to finish, then their request is
   * aborted. An aborted part was not acknowledged: it is sent again after a restart.
   */
  stop(graceMs: number): Promise<void>;
}

/** One attempt at one part of a row; a forward resolves with the upstream's answer. */
type PartSender = (part: string, signal: AbortSignal) => Promise<ForwardAck | void>;

/**
 * Works off the outbox, off the request path. A woken loop, not a poll: it claims the due rows
 * when kicked (a reply enqueued, a delivery finished) and sleeps on one timer until the next
 * row falls due. Each row's parts go out in order from the first not yet acknowledged, and each
 * acknowledgement is committed before the next part is sent, so that neither a retry nor a
 * restart sends an acknowledged part again. A failure is retried with back-off
 * ({@link retryDelayMs}) when the provider may accept it later, up to `delivery.maxAttempts`;
 * otherwise the row settles as failed. Settling commits the row's effects with it: the run's
 * `deliveredTo` or error and its one summary, or (heartbeat replies) the main session's last
 * recipient.
 */
export function createOutbox(deps: OutboxDeps): Outbox {
  const { store, config, log } = deps;
  const timeoutMs = config.delivery.timeoutSeconds * 1000;
  // A claim holds a row for longer than any attempt at it can take; a restart clears it (the
  // store), so only another instance sharing the store ever waits it out.
  const leaseMs = 5 * 60_000 + 4 * Math.max(timeoutMs, config.runtime.forward.timeoutSeconds * 1000);
  const policy = { maxDelayMs: config.delivery.maxDelaySeconds * 1000, random: deps.random };
  const inFlight = new Map<number, { ctl: AbortController; done: Promise<void> }>();
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let pumping: Promise<void> | undefined;
  let again = false;

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
      log.error({ err }, 'claiming deliveries failed; retrying shortly');
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
    const done = attempt(d, ctl.signal)
      .catch((err) => {
        // A store failure: the row stays pending under its lease and is tried again after it.
        log.error({ err, deliveryId: d.id }, 'delivery bookkeeping failed; it is retried later');
      })
      .finally(() => {
        inFlight.delete(d.id);
        kick();
      });
    inFlight.set(d.id, { ctl, done });
  }

  /** Who takes a row's parts: its provider, or (forward rows) the upstream; `problem`: nobody. */
  function senderOf(d: DeliveryRecord): PartSender | { problem: string } {
    if (d.kind === 'forward') {
      const forward = deps.forwarder;
      if (!forward) return { problem: 'runtime.kind is not forward: there is no upstream to forward to' };
      return (part, signal) => forward(d.path, d.key, part, signal);
    }
    const sender = deps.delivery.sender(d.provider);
    if ('problem' in sender) return sender;
    return (part, signal) => sender.send(d.to, part, { signal, timeoutMs });
  }

  async function attempt(d: DeliveryRecord, signal: AbortSignal): Promise<void> {
    const send = senderOf(d);
    if ('problem' in send) return settle(d, { status: 'failed', at: now(), error: send.problem });
    let ack: ForwardAck | void = undefined;
    for (let i = d.partsSent; i < d.parts.length; i++) {
      try {
        ack = await send(d.parts[i]!, signal);
      } catch (err) {
        if (signal.aborted) {
          log.info({ deliveryId: d.id, part: i + 1 }, 'delivery interrupted by shutdown; it resumes at this part after a restart');
          return;
        }
        return failed(d, i, err);
      }
      await store.ackPart(d.id, i);
    }
    return settle(d, { status: 'delivered', at: now() }, ack);
  }

  async function failed(d: DeliveryRecord, part: number, err: unknown): Promise<void> {
    const e = err instanceof DeliveryError ? err : undefined;
    if (!e) log.error({ err, deliveryId: d.id }, 'unexpected delivery error');
    const reason = e?.message ?? 'unexpected delivery error';
    const message = d.parts.length > 1 ? `part ${part + 1} of ${d.parts.length}: ${reason}` : reason;
    const fields = { deliveryId: d.id, runId: d.runId, target: logValue(d.target), attempt: d.attempts, error: logValue(message) };
    if (e?.retryable && d.attempts < config.delivery.maxAttempts) {
      const wait = retryDelayMs(d.attempts, e.retryAfterMs, policy);
      await store.retryDelivery(d.id, new Date(Date.now() + wait).toISOString(), message);
      deps.onOutcome?.(labelOf(d), 'retried');
      log.warn({ ...fields, retryInMs: wait }, 'delivery attempt failed; retrying');
      return;
    }
    const error = e?.retryable ? `${message} (gave up after ${d.attempts} attempts)` : message;
    return settle(d, { status: 'failed', at: now(), error });
  }

  /**
   * Settles a row with what that means for its kind: `forward` ends its run (forward mode: the
   * run is never claimed here) with the upstream's answer or why it was refused; `heartbeat`
   * moves the main session's last recipient; `run` records the delivery and posts the summary.
   */
  async function settle(d: DeliveryRecord, outcome: DeliveryOutcomeRecord, ack?: ForwardAck | void): Promise<void> {
    const delivered = outcome.status === 'delivered';
    const effects: SettleEffects = {};
    let wake = false;
    if (d.kind === 'forward') {
      if (d.runId !== undefined) {
        // No ack: a restart found the part acknowledged but the row not settled (a crash in
        // between); it succeeded, but the upstream's answer was not kept.
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
      const run = await store.getRun(d.runId);
      if (run?.reply !== undefined) {
        const delivery = outcome.status === 'delivered'
          ? { kind: 'delivered' as const, to: d.target }
          : { kind: 'failed' as const, to: d.target, error: { code: 'delivery_failed' as const, message: outcome.error } };
        effects.summary = buildSummary(run, { status: 'succeeded', reply: run.reply, delivery }, deps.clock().toISOString(), config.hooks.mainSummary);
        wake = effects.summary !== undefined && run.wakeMode === 'now';
        if (wake) effects.summary!.wakesNow = true;
      }
    }
    await store.settleDelivery(d.id, outcome, effects);
    deps.onOutcome?.(labelOf(d), outcome.status);
    const fields = { deliveryId: d.id, runId: d.runId, target: logValue(d.target), parts: d.parts.length, attempts: d.attempts };
    if (d.kind === 'forward') {
      const upstream = ack ? { upstreamStatus: ack.status, upstreamRunId: logValue(ack.upstreamRunId) } : {};
      if (outcome.status === 'delivered') log.info({ ...fields, key: d.key, ...upstream }, `${d.path} action forwarded`);
      else log.warn({ ...fields, key: d.key, error: logValue(outcome.error) }, `${d.path} action forward failed`);
    } else if (outcome.status === 'delivered') log.info(fields, 'reply delivered');
    else log.warn({ ...fields, error: logValue(outcome.error) }, 'reply delivery failed');
    if (wake) deps.onSummary();
  }

  function now(): string {
    return new Date().toISOString();
  }

  return {
    kick,
    start() {
      if (!stopped) return;
      stopped = false;
      kick();
    },
    async stop(graceMs) {
      stopped = true;
      clearTimeout(timer);
      await pumping;
      const entries = [...inFlight.values()];
      await stopWithGrace(Promise.all(entries.map((e) => e.done)), graceMs, () => {
        for (const e of entries) e.ctl.abort(new Error('gateway stopping'));
      });
    },
  };
}
