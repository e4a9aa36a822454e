import type { MappingConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { ClaimRules } from '../store/records.js';
import type { Store } from '../store/store.js';

/** A pause takes effect within about this (CONTRACT.md §14: a second). */
export const PAUSE_POLL_MS = 500;

/**
 * Flow control of agent runs (CONTRACT.md §14): each mapping's `concurrency` and the paused
 * mappings, keyed by run source. The paused set follows the store by a poll, not NOTIFY: SQLite
 * has no channel, and one mechanism for both stores is one to test.
 */
export type Flow = ReturnType<typeof createFlow>;

const mappingSource = (id: string): string => `mapping:${id}`;

/** `onResumed`: a mapping was resumed, or wakes it held were released. */
export function createFlow(mappings: readonly MappingConfig[], deps: { store: Store; log: Logger; onResumed: () => void }) {
  const limits: Record<string, number> = {};
  for (const m of mappings) if (m.concurrency !== undefined) limits[mappingSource(m.id)] = m.concurrency;
  const hasLimits = Object.keys(limits).length > 0;
  let current: ClaimRules | undefined = hasLimits ? { limits } : undefined;
  let paused = new Set<string>();
  let heldSources = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function poll(): Promise<void> {
    const state = await deps.store.flowState();
    const now = new Set(state.paused);
    const resumed = [...paused].filter((id) => !now.has(id));
    const changed = resumed.length > 0 || state.paused.some((id) => !paused.has(id));
    paused = now;
    if (changed) {
      const held = state.paused.map(mappingSource);
      heldSources = new Set(held);
      current = hasLimits || held.length > 0 ? { limits, held } : undefined;
      deps.log.info({ paused: state.paused, resumed }, 'paused mappings changed');
    }
    let released = 0;
    for (const source of state.held) if (!heldSources.has(source)) released += await deps.store.releaseWakes(source);
    if (resumed.length > 0 || released > 0) deps.onResumed();
  }

  const refresh = () => (running ??= poll().finally(() => (running = undefined)));

  return {
    /** Undefined when none apply, so the runner claims without rules. */
    rules: (): ClaimRules | undefined => current,
    isHeld: (source: string) => heldSources.size > 0 && heldSources.has(source),
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
