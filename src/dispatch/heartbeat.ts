import type { Logger } from '../log.js';

/** Short enough for "at once (about 250 ms)", long enough that a burst of wakes coalesces; not extended by later triggers, so latency stays bounded. */
const HEARTBEAT_DEBOUNCE_MS = 200;

export interface HeartbeatOptions {
  everyMs: number;
  /** `more`: a backlog larger than one turn, so another right away. */
  turn: (stop: AbortSignal) => Promise<{ more: boolean }>;
  log: Logger;
  debounceMs?: number;
}

/** At most one turn at a time; a trigger while one runs starts the next when it ends, which sees every event accepted meanwhile. */
export function createHeartbeat(opts: HeartbeatOptions) {
  const debounceMs = opts.debounceMs ?? HEARTBEAT_DEBOUNCE_MS;
  let stopped = true;
  let periodic: NodeJS.Timeout | undefined;
  let pending: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let modelCtl = new AbortController();

  /** Asks for a turn soon; coalesces with a pending one, or into the next if one is running. */
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
    /** Stops timers and aborts a model call in flight (its events stay queued); resolves when the turn under way has ended. */
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
