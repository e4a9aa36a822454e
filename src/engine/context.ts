import type { HookRequest } from './compile-mapping.js';
import type { TransformInput } from '../transform-types.js';
import { isCredentialName, shownHeaderValue } from '../credentials.js';
import { copyWithoutPrototypeKeys, isPrototypeKey } from './prototype-keys.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The template context of a request, or of forEach item `index` (≥ 0): the payload's (or item's) fields, then the
 * named keys, which win (CONTRACT.md §6). Prototype keys are not copied: assigning `__proto__` would set the prototype.
 */
export function requestContext(req: HookRequest, now: string, item?: unknown, index = -1): Record<string, unknown> {
  const top = index >= 0 ? item : req.payload;
  const context = isRecord(top) ? copyWithoutPrototypeKeys(top) : {};
  context.payload = req.payload;
  context.headers = req.headers;
  context.query = req.query;
  context.path = req.name;
  context.now = now;
  if (index >= 0) {
    context.item = item;
    context.index = index;
  }
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

/**
 * A request's headers split by the credential rule (credentials.ts, CONTRACT.md §8): `headers` for templates,
 * transforms and `match.when`; `withheld`, the credentials, only for `match.headers` (e.g. `X-Gitlab-Token`).
 */
export function requestHeaders(h: Record<string, string | string[] | undefined>): { headers: Record<string, string>; withheld: Record<string, string> } {
  const headers: Record<string, string> = {};
  const withheld: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v === undefined) continue;
    const value = Array.isArray(v) ? v.join(', ') : v;
    if (isCredentialName(k)) withheld[k] = value;
    else headers[k] = shownHeaderValue(k, value);
  }
  return { headers, withheld };
}

/** Query parameters as templates and transforms see them (`HookRequest.query`), from a query without credentials (credentials.ts withoutCredentialParams): never a prototype key. */
export function templateQuery(cleanQuery: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (cleanQuery === '') return out;
  for (const [k, v] of new URLSearchParams(cleanQuery)) {
    if (isPrototypeKey(k)) continue;
    out[k] = v;
  }
  return out;
}

/** The request's `url` as templates and transforms see it: the routed path, percent-encoded, and the query without credentials. */
export function templateUrl(path: string, cleanQuery: string): string {
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return cleanQuery === '' ? encoded : `${encoded}?${cleanQuery}`;
}
