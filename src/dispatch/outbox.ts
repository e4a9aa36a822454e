import { setTimeout as sleep } from 'node:timers/promises';
import type { Config, Provider } from '../config/types.js';
import type { DeliveryOutcome } from '../metrics.js';
import type { Logger } from '../log.js';
import type { DeliveryRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { CallbackSender } from './callback.js';
import type { Delivery } from './delivery.js';
import type { Forwarder } from './forward.js';
import { attemptRow, type RowContext } from './outbox-row.js';
import { logStoreFailure } from './retry.js';

/** Deliveries sent at once; the rest wait their turn in the store. */
const MAX_IN_FLIGHT = 16;
/** The longest a timer sleeps before looking again (setTimeout caps at 2^31 − 1 ms). */
const MAX_SLEEP_MS = 60 * 60 * 1000;
const STORE_RETRY_MS = 5_000;

export interface OutboxDeps {
  store: Store;
  config: Readonly<Config>;
  log: Logger;
  delivery: Delivery;
  /** Forward mode's sender of `forward` rows; absent, such rows fail. */
  forwarder?: Forwarder;
  /** The sender of `callback` rows; absent (no hooks.callbackSecret), such rows fail. */
  callbacks?: CallbackSender;
  /** A row of this run settled: for those waiting on the run. */
  onRunChanged?: (runId: string) => void;
  /** Time of the summary events; due times use real time (they drive timers). */
  clock: () => Date;
  random?: () => number;
  /** A summary of a run with `wakeMode: now` was posted. */
  onSummary: () => void;
  onOutcome?: (provider: Provider | 'forward' | 'callback', outcome: DeliveryOutcome) => void;
}

/** The sender loop of the durable outbox (CONTRACT.md §9). */
export interface Outbox {
  start(): void;
  /** Something was enqueued or finished: look for due rows now. Cheap to call often. */
  kick(): void;
  /** Stops claiming; deliveries under way get `graceMs`, then are aborted and sent again after a restart. */
  stop(graceMs: number): Promise<void>;
}

/** A woken loop, not a poll: claims due rows when kicked, then sleeps on one timer until the next falls due. */
export function createOutbox(deps: OutboxDeps): Outbox {
  const { config, store, log } = deps;
  const timeoutMs = config.delivery.timeoutSeconds * 1000;
  const row: RowContext = { deps, timeoutMs, policy: { maxDelayMs: config.delivery.maxDelaySeconds * 1000, random: deps.random } };
  // Longer than any attempt can take; a restart clears it, so only another instance waits it out.
  const leaseMs = 5 * 60_000 + 4 * Math.max(timeoutMs, config.runtime.forward.timeoutSeconds * 1000);
  const inFlight = new Map<number, { ctl: AbortController; done: Promise<void> }>();
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let pumping: Promise<void> | undefined;
  /** Kicked while a claim was under way: claim again when it ends. */
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
    const done = attemptRow(row, d, ctl.signal)
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
    async stop(graceMs) {
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
