import type { FlowState } from './records.js';

/** Rows of sql/flow.ts flowState, as {@link FlowState}: both backends read them the same way. */
export function toFlowState(rows: readonly { name: string; what: string }[]): FlowState {
  const state: FlowState = { paused: [], held: [] };
  for (const r of rows) (r.what === 'paused' ? state.paused : state.held).push(r.name);
  state.paused.sort();
  state.held.sort();
  return state;
}

/** Rows of sql/flow.ts countHeld (wakes and runs apart), summed per source. */
export function toHeldCounts(rows: readonly { source: string; n: number | string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.source] = (counts[r.source] ?? 0) + Number(r.n);
  return counts;
}
