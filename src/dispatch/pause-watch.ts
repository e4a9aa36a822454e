import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { mappingSource, type FlowRules } from './flow.js';

/** How often each gateway reads the paused mappings: a pause takes effect within about this (CONTRACT.md §14: a second). */
export const PAUSE_POLL_MS = 500;

/**
 * Keeps this gateway's paused set (flow.ts) in step with the store, where `hookrelay pause`,
 * `resume` and the console write it — another process, or another instance. A poll of two tiny
 * tables, not NOTIFY: the SQLite CLI writes the file beside the gateway, where no channel
 * exists, and one mechanism for both stores is one to test. The accept path reads only the set
 * in memory: pausing costs no request a store read.
 *
 * Each poll also releases the wakes held for mappings no longer paused (those of a resume, and
 * any a request committed as held just before this gateway saw the resume), and on a resume
 * `onResumed` kicks the runner and the heartbeat: the held runs were queued all along, oldest
 * first, so they are claimed in order as slots allow.
 */
export interface PauseWatch {
  /** Reads the state once (before anything is claimed or accepted), then polls. */
  start(): Promise<void>;
  /** Reads the state now (after the console paused or resumed). */
  refresh(): Promise<void>;
  stop(): void;
}

export function watchPauses(deps: { store: Store; flow: FlowRules; log: Logger; onResumed: () => void; everyMs?: number }): PauseWatch {
  let paused = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function poll(): Promise<void> {
    const state = await deps.store.flowState();
    const now = new Set(state.paused);
    const resumed = [...paused].filter((id) => !now.has(id));
    const changed = resumed.length > 0 || state.paused.some((id) => !paused.has(id));
    paused = now;
    if (changed) {
      deps.flow.setPaused(state.paused);
      deps.log.info({ paused: state.paused, resumed }, 'paused mappings changed');
    }
    let released = 0;
    const pausedSources = new Set(state.paused.map(mappingSource));
    for (const source of state.held) if (!pausedSources.has(source)) released += await deps.store.releaseWakes(source);
    if (resumed.length > 0 || released > 0) deps.onResumed();
  }

  /** One poll at a time; a call during one shares it. */
  const refresh = () => (running ??= poll().finally(() => (running = undefined)));

  return {
    async start() {
      await refresh();
      timer = setInterval(() => {
        refresh().catch((err) => deps.log.error({ err }, 'reading the paused mappings failed; retrying'));
      }, deps.everyMs ?? PAUSE_POLL_MS);
      timer.unref();
    },
    refresh,
    stop: () => clearInterval(timer),
  };
}
