import type { ProviderOrLast, SessionMode, Thinking, WakeMode } from './config/types.js';

/**
 * What the mapping engine hands the dispatcher: a validated action, the same shape whether
 * it came from `POST {path}/wake`, `POST {path}/agent` or a mapping (CONTRACT.md §5–6).
 *
 * It sits here, below both, because two floors exchange it (STYLE.md #14): engine/ emits it,
 * dispatch/ carries it out, and neither may import the other's files for it.
 */
export type Action = WakeAction | AgentAction;

/** Where text came from; it names the untrusted-content fence: `wake`, `agent`, `mapping:<id>`. */
export type ActionSource = string;

/**
 * A key rendered by the mapping's `idempotencyKey` template (CONTRACT.md §8). `item`: under
 * forEach, the item's JSON — what the key guards, instead of the whole request body.
 */
export interface ActionKey {
  key: string;
  item?: string;
}

export interface WakeAction {
  kind: 'wake';
  text: string;
  mode: WakeMode;
  source: ActionSource;
  /** True when the text may reach the model without the untrusted-content fence. */
  unsafe: boolean;
  idempotency?: ActionKey;
}

export interface AgentAction {
  kind: 'agent';
  message: string;
  name?: string;
  /** Already defaulted and checked against hooks.allowedSessionKeyPrefixes. */
  sessionKey: string;
  /**
   * True when the request, the mapping or its transform named the session key (not
   * hooks.defaultSessionKey, not a generated `hook:<uuid>`): forward mode forwards only such a
   * key (CONTRACT.md §9).
   */
  sessionKeyGiven?: true;
  /** The request's `agentId`, already checked to be `agent.id`; forward mode forwards it. */
  agentId?: string;
  /** As the sender gave it; absent means persistent here (OpenClaw's default is isolated). */
  sessionMode?: SessionMode;
  wakeMode: WakeMode;
  deliver: boolean;
  provider: ProviderOrLast;
  to?: string;
  /** Resolved through agent.aliases and checked against agent.allowedModels. */
  model?: string;
  thinking?: Thinking;
  timeoutSeconds?: number;
  source: ActionSource;
  unsafe: boolean;
  idempotency?: ActionKey;
  /** Where the run's outcome is POSTed when it ends (docs/callbacks.md); already checked. */
  callbackUrl?: string;
}

/** What an action became once accepted (the dispatcher draws the ids, the listener answers them), in the order of the actions. */
export type Accepted = { action: 'wake'; eventId: string } | { action: 'agent'; runId: string; sessionKey: string };

/** The ids of what was accepted, events and runs apart (what a key guards, what a request-log row lists). */
export function actionIds(accepted: readonly Accepted[]): { eventIds: string[]; runIds: string[] } {
  const eventIds: string[] = [];
  const runIds: string[] = [];
  for (const a of accepted) {
    if (a.action === 'wake') eventIds.push(a.eventId);
    else runIds.push(a.runId);
  }
  return { eventIds, runIds };
}
