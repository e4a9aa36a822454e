/**
 * The transform contract as types, for transform authors (`import type { Transform } from
 * 'hookrelay'`, wired through package.json `exports`) and for the engine, which imports the
 * same definitions: one shape, so the documented keys and the applied keys cannot drift.
 * It sits below `engine/` like errors.ts, since the package's users import it too.
 */

/** What a transform is called with (a copy: the transform runs in a worker process). Treat it as read-only. */
export interface TransformInput {
  /** The request body (a JSON object). */
  payload: Record<string, unknown>;
  /** Lower-case header names; the token-carrying ones are removed. */
  headers: Record<string, string>;
  /** Query parameters, without `token`. */
  query: Record<string, string>;
  /** The NAME part of `POST {hooks.path}/NAME`. */
  path: string;
  /** The path the request was routed on and its query, without the token, e.g. `/hooks/github?x=1`. */
  url: string;
  /** ISO time of the request. */
  now: string;
  /** Under `forEach`: the current item of the array. */
  item?: unknown;
  /** Under `forEach`: the item's position, from 0. */
  index?: number;
}

/**
 * The action fields a transform may set; each overrides the mapping's template result, and the
 * result is validated exactly like a direct `/wake` or `/agent` body. `undefined` (or a missing
 * key) keeps the template's value; `null` clears an optional field.
 */
export interface TransformFields {
  /** Switch the action kind. */
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

/** A transform module's export: sync or async. */
export type Transform = (input: TransformInput) => TransformResult | Promise<TransformResult>;

/**
 * The keys the engine copies from a transform's result onto the action. `kind` (it picks the
 * templates) and `channel` (an alias) are handled on their own; see {@link OverrideKey}.
 */
export const OVERRIDE_KEYS = [
  'text', 'mode', 'message', 'name', 'sessionKey', 'wakeMode', 'deliver',
  'provider', 'to', 'model', 'thinking', 'timeoutSeconds',
] as const;

type OverrideKey = (typeof OVERRIDE_KEYS)[number];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Does not compile when OVERRIDE_KEYS and TransformFields list different keys.
true satisfies Same<OverrideKey | 'kind' | 'channel', keyof TransformFields>;
