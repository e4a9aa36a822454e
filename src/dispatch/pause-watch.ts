import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { mappingSource, type FlowRules } from './flow.js';

/** A pause takes effect within about this (CONTRACT.md §14: a second). */
export const PAUSE_POLL_MS = 500;

/**
 * Keeps the paused set (flow.ts) in step with the store. A poll, not NOTIFY: SQLite has no
 * channel, and one mechanism for both stores is one to test.
 */
export interface PauseWatch {
  start(): Promise<void>;
  stop(): void;
}

export function watchPauses(deps: { store: Store; flow: FlowRules; log: Logger; onResumed: () => void }): PauseWatch {
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

  const refresh = () => (running ??= poll().finally(() => (running = undefined)));

  return {
    async start() {
      await refresh();
      timer = setInterval(() => {
        refresh().catch((err) => deps.log.error({ err }, 'reading the paused mappings failed; retrying'));
      }, PAUSE_POLL_MS);
      timer.unref();
    },
    stop: () => clearInterval(timer),
  };
}
