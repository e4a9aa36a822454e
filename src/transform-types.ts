/** The transform contract for authors (`import type { Transform } from 'hookrelay'`) and the engine alike, so documented and applied keys cannot drift. */

/** A request's payload: a JSON object, or on a mapped hook a top-level JSON array (CONTRACT.md §15: SendGrid's and HubSpot's events). */
export type Payload = Record<string, unknown> | unknown[];

/** What a transform is called with (a copy: the transform runs in a worker process). Treat it as read-only. */
export interface TransformInput {
  payload: Payload;
  /** Lower-case header names; the token-carrying ones are removed. */
  headers: Record<string, string>;
  /** Query parameters, without `token`. */
  query: Record<string, string>;
  /** The NAME part of `POST {hooks.path}/NAME`. */
  path: string;
  /** The path the request was routed on and its query, without the token, e.g. `/hooks/github?x=1`. */
  url: string;
  now: string;
  /** Under `forEach`: the current item of the array. */
  item?: unknown;
  /** Under `forEach`: the item's position, from 0. */
  index?: number;
}

/** Each overrides the template result and is validated like a `/wake` or `/agent` body; `undefined` keeps the template's value, `null` clears it. */
export interface TransformFields {
  kind?: 'wake' | 'agent';
  /** wake: the system event text. */
  text?: string;
  /** wake: `now` triggers a heartbeat at once. */
  mode?: 'now' | 'next-heartbeat';
  /** agent: the message of the turn. */
  message?: string;
  /** agent: prefixes the main-session summary as `[name]`. */
  name?: string | null;
  /** agent: must match hooks.allowedSessionKeyPrefixes. */
  sessionKey?: string | null;
  wakeMode?: 'now' | 'next-heartbeat';
  deliver?: boolean;
  provider?: 'last' | 'whatsapp' | 'telegram' | 'signal' | 'imessage' | 'discord' | 'slack' | 'msteams';
  /** An alias of `provider` (OpenClaw's name). */
  channel?: TransformFields['provider'];
  to?: string | null;
  /** Checked against agent.allowedModels (aliases allowed). */
  model?: string | null;
  thinking?: 'off' | 'minimal' | 'low' | 'medium' | 'high' | null;
  timeoutSeconds?: number | null;
}

/** What a transform returns (or resolves to): an override, `null` to skip the request (204), or `undefined` to keep the template result. */
export type TransformResult = TransformFields | null | undefined;

export type Transform = (input: TransformInput) => TransformResult | Promise<TransformResult>;

/** `kind` (it picks the templates) and `channel` (an alias) are handled on their own. */
export const OVERRIDE_KEYS = [
  'text', 'mode', 'message', 'name', 'sessionKey', 'wakeMode', 'deliver',
  'provider', 'to', 'model', 'thinking', 'timeoutSeconds',
] as const;

type OverrideKey = (typeof OVERRIDE_KEYS)[number];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Does not compile when OVERRIDE_KEYS and TransformFields list different keys.
true satisfies Same<OverrideKey | 'kind' | 'channel', keyof TransformFields>;
