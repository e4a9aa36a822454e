import type { Logger } from '../log.js';

/**
 * How long a `now` trigger waits before the turn starts: short enough for "at once (about
 * 250 ms)", long enough that a burst of wakes accepted together coalesces into one turn.
 * The window opens at the first trigger and is not extended by later ones, so latency stays bounded.
 */
const HEARTBEAT_DEBOUNCE_MS = 200;

/** The heartbeat scheduler. */
export interface Heartbeat {
  /** Asks for a turn soon; coalesces with a pending one, or into the next if one is running. */
  trigger(): void;
  /** Starts the periodic trigger. */
  start(): void;
  /**
   * Stops timers and aborts a model call in flight (its events stay queued); resolves when
   * the turn under way has ended. Replies go out through the outbox, not from here.
   */
  stop(): Promise<void>;
}

export interface HeartbeatOptions {
  /** Periodic interval; 0 or less disables the periodic trigger. */
  everyMs: number;
  /** One turn; `stop` aborts its model call; `more` asks for another right away (a backlog larger than one turn). */
  turn: (stop: AbortSignal) => Promise<{ more: boolean }>;
  log: Logger;
  debounceMs?: number;
}

/**
 * At most one heartbeat turn runs at a time. A trigger while a turn is pending joins it; a
 * trigger while one runs sets a flag, and the next turn starts (after the debounce) when the
 * current one ends: it sees every event accepted meanwhile.
 */
export function createHeartbeat(opts: HeartbeatOptions): Heartbeat {
  const debounceMs = opts.debounceMs ?? HEARTBEAT_DEBOUNCE_MS;
  let stopped = true;
  let periodic: NodeJS.Timeout | undefined;
  let pending: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let modelCtl = new AbortController();

  function trigger(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    if (pending) return;
    pending = setTimeout(fire, debounceMs);
    pending.unref();
  }

  function fire(): void {
    pending = undefined;
    if (stopped) return;
    running = runTurn().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        trigger();
      }
    });
  }

  async function runTurn(): Promise<void> {
    try {
      const { more } = await opts.turn(modelCtl.signal);
      if (more) again = true;
    } catch (err) {
      // Store failures: the cursor was not advanced, so the events are retried on the next trigger.
      opts.log.error({ err }, 'heartbeat turn failed');
    }
  }

  return {
    trigger,
    start() {
      if (!stopped) return;
      stopped = false;
      modelCtl = new AbortController();
      if (opts.everyMs > 0) {
        periodic = setInterval(trigger, opts.everyMs);
        periodic.unref();
      }
    },
    async stop() {
      stopped = true;
      again = false;
      clearInterval(periodic);
      clearTimeout(pending);
      pending = undefined;
      modelCtl.abort(new Error('gateway stopping'));
      await running;
    },
  };
}
