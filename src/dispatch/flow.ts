import type { MappingConfig } from '../config/types.js';
import type { ClaimRules } from '../store/records.js';

/** Flow control of agent runs (CONTRACT.md §14): each mapping's `concurrency` and the paused mappings, keyed by run source. */
export interface FlowRules {
  /** Undefined when none apply, so the runner claims without rules. */
  rules(): ClaimRules | undefined;
  setPaused(ids: readonly string[]): void;
  isHeld(source: string): boolean;
}

export const mappingSource = (id: string): string => `mapping:${id}`;

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
