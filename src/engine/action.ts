import type { ProviderOrLast, Thinking, WakeMode } from '../config/types.js';

/**
 * What the mapping engine hands the dispatcher: a validated action, the same shape whether
 * it came from `POST {path}/wake`, `POST {path}/agent` or a mapping (CONTRACT.md §5–6).
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
}

/** The result of the pure mapping step `map()`. */
export type MapResult =
  | {
      type: 'actions';
      mappingId: string;
      actions: Action[];
      /** forEach only: items beyond `hooks.maxFanOut` that were not acted on (absent when none). */
      dropped?: number;
    }
  | { type: 'skipped'; mappingId: string }
  | { type: 'no_match' };

/** One request as the mapping step sees it: no Koa, no sockets. */
export interface HookRequest {
  /** The NAME part of `POST {path}/NAME` (no leading or trailing slash). */
  name: string;
  payload: Record<string, unknown>;
  /** Lower-case header names. */
  headers: Record<string, string>;
  query: Record<string, string>;
  /** The path the request was routed on and its query, without the token, e.g. `/hooks/github?x=1`. */
  url: string;
  /** Injected clock: ISO text of `now` in templates and transforms. */
  now: Date;
  /**
   * Called with the matched mapping's id before anything is rendered or transformed; throws
   * to refuse the request (the listener's signature check: a mapping with `verify` acts
   * only on a request its own signature verified).
   */
  admit?: (mappingId: string) => void;
}
