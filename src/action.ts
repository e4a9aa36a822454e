import type { ProviderOrLast, SessionMode, Thinking, WakeMode } from './config/types.js';

/** A validated action, the same whether from `/wake`, `/agent` or a mapping (CONTRACT.md §5–6); below engine/ and dispatch/ (STYLE.md #14). */
export type Action = WakeAction | AgentAction;

/** `item`: under forEach, the item's JSON — what the key guards instead of the whole body (CONTRACT.md §8). */
export interface ActionKey {
  key: string;
  item?: string;
}

export interface WakeAction {
  kind: 'wake';
  text: string;
  mode: WakeMode;
  /** Where text came from; it names the fence's source: `wake`, `agent`, `mapping:<id>`. */
  source: string;
  unsafe: boolean;
  idempotency?: ActionKey;
}

export interface AgentAction {
  kind: 'agent';
  message: string;
  name?: string;
  sessionKey: string;
  /** Named by the request, mapping or transform, not defaulted: forward mode forwards only such a key (CONTRACT.md §9). */
  sessionKeyGiven?: true;
  agentId?: string;
  /** Absent means persistent here (OpenClaw's default is isolated). */
  sessionMode?: SessionMode;
  wakeMode: WakeMode;
  deliver: boolean;
  provider: ProviderOrLast;
  to?: string;
  model?: string;
  thinking?: Thinking;
  timeoutSeconds?: number;
  source: string;
  unsafe: boolean;
  idempotency?: ActionKey;
  callbackUrl?: string;
}

/** In the order of the actions. */
export type Accepted = { action: 'wake'; eventId: string } | { action: 'agent'; runId: string; sessionKey: string };

export function actionIds(accepted: readonly Accepted[]): { eventIds: string[]; runIds: string[] } {
  const ids = { eventIds: [] as string[], runIds: [] as string[] };
  for (const a of accepted) {
    if (a.action === 'wake') ids.eventIds.push(a.eventId);
    else ids.runIds.push(a.runId);
  }
  return ids;
}
