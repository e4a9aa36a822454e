import type { MappingConfig } from '../config/types.js';
import type { ClaimRules } from '../store/records.js';

/**
 * Flow control of agent runs (CONTRACT.md §14, docs/flow-control.md): what a claim must respect
 * — each mapping's `concurrency`, and the mappings paused — as the store's {@link ClaimRules}.
 * The rules are keyed by run source (`mapping:<id>`, what every run of a mapping carries). With
 * none, {@link FlowRules.rules} is undefined and the runner claims exactly as before: the
 * rule-bound claim costs only the gateways that use it.
 */
export interface FlowRules {
  /** The rules of the next claim; undefined: none apply. */
  rules(): ClaimRules | undefined;
  /** Sets the paused mappings (ids): their runs are held. */
  setPaused(ids: readonly string[]): void;
  /** Whether wakes and runs of this source (`mapping:<id>`) are held now. */
  isHeld(source: string): boolean;
}

/** The source of a mapping's actions: the same string its runs and events carry. */
export const mappingSource = (id: string): string => `mapping:${id}`;

/** Flow rules over `mappings` (hooks.mappings); nothing paused at first. */
export function createFlowRules(mappings: readonly MappingConfig[]): FlowRules {
  const limits: Record<string, number> = {};
  for (const m of mappings) if (m.concurrency !== undefined) limits[mappingSource(m.id)] = m.concurrency;
  const hasLimits = Object.keys(limits).length > 0;
  let held: string[] = [];
  let heldSet = new Set<string>();
  let current: ClaimRules | undefined = hasLimits ? { limits } : undefined;
  return {
    rules: () => current,
    setPaused(ids) {
      held = ids.map(mappingSource);
      heldSet = new Set(held);
      current = hasLimits || held.length > 0 ? { limits, held } : undefined;
    },
    isHeld: (source) => heldSet.size > 0 && heldSet.has(source),
  };
}
