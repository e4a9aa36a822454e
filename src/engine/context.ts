import type { HookRequest } from './mapping-step.js';
import type { TransformInput } from '../transform-types.js';
import { SECRET_HEADERS } from '../config/schema.js';
import { copyWithoutPrototypeKeys, isPrototypeKey } from './prototype-keys.js';

/** What a transform module is called with: the package's public type (transform-types.ts). */
export type { TransformInput };

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The template context of a request: the payload's own fields at the top level, then the
 * named keys, which win over payload fields of the same name (those stay reachable as
 * `payload.x`). Prototype keys are not copied: they never resolve, and assigning
 * `__proto__` would set the context's prototype.
 */
export function requestContext(req: HookRequest, now: string): Record<string, unknown> {
  const payload = req.payload;
  const context = isRecord(payload) ? copyWithoutPrototypeKeys(payload) : {};
  context.payload = payload;
  context.headers = req.headers;
  context.query = req.query;
  context.path = req.name;
  context.now = now;
  return context;
}

/**
 * The template context of one `forEach` item: the item's own fields at the top level, then
 * `item`, `index` and the request's named keys (`payload`, `headers`, `query`, `path`, `now`).
 */
export function itemContext(req: HookRequest, now: string, item: unknown, index: number): Record<string, unknown> {
  const context = isRecord(item) ? copyWithoutPrototypeKeys(item) : {};
  context.payload = req.payload;
  context.headers = req.headers;
  context.query = req.query;
  context.path = req.name;
  context.now = now;
  context.item = item;
  context.index = index;
  return context;
}

/** The argument of a transform call; `item` and `index` only under `forEach` (index ≥ 0). */
export function transformInput(req: HookRequest, now: string, item: unknown, index: number): TransformInput {
  const input: TransformInput = { payload: req.payload, headers: req.headers, query: req.query, path: req.name, url: req.url, now };
  if (index >= 0) {
    input.item = item;
    input.index = index;
  }
  return input;
}

/** Headers that carry the token (or another credential) never reach templates, transforms or the model. */
const HIDDEN_HEADERS: ReadonlySet<string> = new Set(SECRET_HEADERS);

/**
 * A request's headers as templates and transforms see them (`HookRequest.headers`): the
 * token-carrying ones left out, repeated ones joined. `serve` and `hookrelay test` both use it,
 * so a dry run renders what a real request would.
 */
export function templateHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v === undefined || HIDDEN_HEADERS.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/**
 * The raw query string without any `token` parameter, however its name is escaped (`to%6Ben`:
 * names are decoded as URLSearchParams does). The gate applies it once the token has been
 * checked, so that no later layer sees the token, and `hookrelay test` to its `--query`.
 */
export function withoutToken(rawQuery: string): string {
  if (rawQuery === '') return rawQuery;
  return rawQuery.split('&').filter((pair) => pair !== '' && !isTokenParam(pair)).join('&');
}

function isTokenParam(pair: string): boolean {
  for (const [key] of new URLSearchParams(pair)) return key === 'token';
  return false;
}

/** Query parameters as templates and transforms see them (`HookRequest.query`), from a token-free query: never a prototype key. */
export function templateQuery(tokenFreeQuery: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (tokenFreeQuery === '') return out;
  for (const [k, v] of new URLSearchParams(tokenFreeQuery)) {
    if (isPrototypeKey(k)) continue;
    out[k] = v;
  }
  return out;
}

/** A path that encodeURIComponent() would leave as it is, segment by segment (most hook paths). */
const UNRESERVED_PATH = /^[A-Za-z0-9\-_.!~*'()/]*$/;

/**
 * The request's `url` as templates and transforms see it (`HookRequest.url`): the path it was
 * routed on, percent-encoded, and its token-free query.
 */
export function templateUrl(path: string, tokenFreeQuery: string): string {
  const encoded = UNRESERVED_PATH.test(path) ? path : path.split('/').map(encodeURIComponent).join('/');
  return tokenFreeQuery === '' ? encoded : `${encoded}?${tokenFreeQuery}`;
}
