import type { Config, Provider } from '../config/types.js';
import type { DeliveryOutcome } from '../metrics.js';
import type { Logger } from '../log.js';
import type { DeliveryRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { CallbackSender } from './callback.js';
import type { Delivery } from './delivery.js';
import type { Forwarder } from './forward.js';
import { stopWithGrace } from './grace.js';
import { attemptRow, type RowContext } from './outbox-row.js';
import { logStoreFailure } from './retry.js';

/** Deliveries sent at once (each its parts in order); the rest wait their turn in the store. */
const MAX_IN_FLIGHT = 16;
/** The longest a timer sleeps before looking again (setTimeout caps at 2^31 − 1 ms). */
const MAX_SLEEP_MS = 60 * 60 * 1000;
/** After a store failure, the loop looks again this much later. */
const STORE_RETRY_MS = 5_000;

/** What the outbox's loop and the work of one row (outbox-row.ts) need. */
export interface OutboxDeps {
  store: Store;
  config: Readonly<Config>;
  log: Logger;
  delivery: Delivery;
  /** Forward mode: the sender of `forward` rows (undefined: such rows fail, there is no upstream). */
  forwarder?: Forwarder;
  /** The sender of `callback` rows (undefined: hooks.callbackSecret is not set; such rows fail). */
  callbacks?: CallbackSender;
  /** A row of this run settled (its delivery, forward or callback): for those waiting on the run. */
  onRunChanged?: (runId: string) => void;
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
  onOutcome?: (provider: Provider | 'forward' | 'callback', outcome: DeliveryOutcome) => void;
}

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

/** The loop's state, shared by the functions below. */
interface Loop {
  row: RowContext;
  /** How long a claim holds a row. */
  leaseMs: number;
  inFlight: Map<number, { ctl: AbortController; done: Promise<void> }>;
  stopped: boolean;
  /** Wakes the loop when the next row falls due. */
  timer: NodeJS.Timeout | undefined;
  /** The claim under way, if any. */
  pumping: Promise<void> | undefined;
  /** Kicked while a claim was under way: claim again when it ends. */
  again: boolean;
}

/**
 * Works off the outbox, off the request path. A woken loop, not a poll: it claims the due rows
 * when kicked (a reply enqueued, a delivery finished) and sleeps on one timer until the next
 * row falls due. Each row's parts go out in order from the first not yet acknowledged, and each
 * acknowledgement is committed before the next part is sent, so that neither a retry nor a
 * restart sends an acknowledged part again (outbox-row.ts). A failure is retried with back-off
 * when the provider may accept it later, up to `delivery.maxAttempts`; otherwise the row settles
 * as failed. Settling commits the row's effects with it: the run's `deliveredTo` or error and
 * its one summary, or (heartbeat replies) the main session's last recipient.
 */
export function createOutbox(deps: OutboxDeps): Outbox {
  const { config } = deps;
  const timeoutMs = config.delivery.timeoutSeconds * 1000;
  const loop: Loop = {
    row: { deps, timeoutMs, policy: { maxDelayMs: config.delivery.maxDelaySeconds * 1000, random: deps.random } },
    // A claim holds a row for longer than any attempt at it can take; a restart clears it (the
    // store), so only another instance sharing the store ever waits it out.
    leaseMs: 5 * 60_000 + 4 * Math.max(timeoutMs, config.runtime.forward.timeoutSeconds * 1000),
    inFlight: new Map(),
    stopped: true,
    timer: undefined,
    pumping: undefined,
    again: false,
  };
  return {
    kick: () => kick(loop),
    start() {
      if (!loop.stopped) return;
      loop.stopped = false;
      kick(loop);
    },
    stop: (graceMs) => stop(loop, graceMs),
  };
}

function kick(loop: Loop): void {
  if (loop.stopped) return;
  if (loop.pumping) {
    loop.again = true;
    return;
  }
  loop.pumping = pump(loop).finally(() => {
    loop.pumping = undefined;
    if (loop.again) {
      loop.again = false;
      kick(loop);
    }
  });
}

function sleepUntil(loop: Loop, at: number): void {
  clearTimeout(loop.timer);
  loop.timer = setTimeout(kick, Math.min(Math.max(0, at - Date.now()), MAX_SLEEP_MS), loop);
  loop.timer.unref();
}

/** Claims the due rows there is room for, starts each, and sleeps until the next falls due. */
async function pump(loop: Loop): Promise<void> {
  const { store, log } = loop.row.deps;
  const free = MAX_IN_FLIGHT - loop.inFlight.size;
  if (free <= 0) return; // a delivery that ends kicks again
  const now = Date.now();
  let claimed: Awaited<ReturnType<Store['claimDeliveries']>>;
  try {
    claimed = await store.claimDeliveries(new Date(now).toISOString(), free, new Date(now + loop.leaseMs).toISOString());
  } catch (err) {
    logStoreFailure(log, err, 'claiming deliveries failed; retrying shortly');
    sleepUntil(loop, now + STORE_RETRY_MS);
    return;
  }
  // Claimed during stop(): they keep their lease, which the next start clears.
  if (loop.stopped) return;
  for (const d of claimed.deliveries) if (!loop.inFlight.has(d.id)) launch(loop, d);
  if (claimed.nextAt !== undefined) sleepUntil(loop, Date.parse(claimed.nextAt));
}

function launch(loop: Loop, d: DeliveryRecord): void {
  const ctl = new AbortController();
  const done = attemptRow(loop.row, d, ctl.signal)
    .catch((err) => {
      // Its progress could not be stored (refused for good, or stopping while the store was
      // down): the row stays pending under its lease and is tried again after it.
      loop.row.deps.log.error({ err, deliveryId: d.id }, 'delivery bookkeeping failed; it is retried later');
    })
    .finally(() => {
      loop.inFlight.delete(d.id);
      kick(loop);
    });
  loop.inFlight.set(d.id, { ctl, done });
}

async function stop(loop: Loop, graceMs: number): Promise<void> {
  loop.stopped = true;
  clearTimeout(loop.timer);
  await loop.pumping;
  const entries = [...loop.inFlight.values()];
  await stopWithGrace(Promise.all(entries.map((e) => e.done)), graceMs, () => {
    for (const e of entries) e.ctl.abort(new Error('gateway stopping'));
  });
}
