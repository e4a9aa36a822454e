import { SECRET_HEADERS } from './config/schema.js';
import type { MappingConfig } from './config/types.js';

/**
 * The one rule of what in a request is a credential (CONTRACT.md §8), and of what is not the
 * request's own to send again. Everything a request shows past the gate goes through it: the
 * headers, query and url that templates, transforms and `match.when` see (engine/context.ts,
 * from the query the gate cleaned, http/gate.ts), the head the request log keeps
 * (http/request-log.ts, which the console shows), the fixtures made from it
 * (fixtures/from-request.ts) and the console's replay (http/replay.ts) — so that none of them
 * can let through what another drops.
 */

/**
 * Names that say they hold a credential: the hooks token's own (`x-hookrelay-token`, `?token=`),
 * API keys, secrets, signatures (`X-Hub-Signature-256`, `Stripe-Signature`, …; `hmac` for
 * `X-Shopify-Hmac-Sha256`-style headers), passwords, sessions, cookies and `Authorization`.
 */
const CREDENTIAL_NAME = /token|secret|signature|hmac|api[-_]?key|password|session|cookie|authorization/;
const NAMED: ReadonlySet<string> = new Set(SECRET_HEADERS);

/** Whether a header or query parameter name says it holds a credential (any case). */
export function isCredentialName(name: string): boolean {
  const lower = name.toLowerCase();
  return NAMED.has(lower) || CREDENTIAL_NAME.test(lower);
}

/**
 * Headers a proxy or a client fills with the request's URL (or the page's), query included —
 * so with a `?token=` too. Lower case.
 */
const URL_HEADERS: ReadonlySet<string> = new Set(['referer', 'x-forwarded-uri', 'x-original-url', 'x-original-uri', 'x-rewrite-url', 'x-envoy-original-path']);

/**
 * The raw query string without any parameter {@link isCredentialName} names, however its name
 * is escaped (`to%6Ben`: names are decoded as URLSearchParams does). The gate applies it once
 * the token has been checked, so that no later layer sees a credential.
 */
export function withoutCredentialParams(rawQuery: string): string {
  if (rawQuery === '') return rawQuery;
  return rawQuery.split('&').filter((pair) => pair !== '' && !isCredentialParam(pair)).join('&');
}

function isCredentialParam(pair: string): boolean {
  for (const [key] of new URLSearchParams(pair)) return isCredentialName(key);
  return false;
}

/**
 * A header's value as it may be shown: that of a header that repeats a URL
 * ({@link URL_HEADERS}) without its credential parameters and fragment; any other as it is.
 * `name` lower case.
 */
export function shownHeaderValue(name: string, value: string): string {
  if (!URL_HEADERS.has(name)) return value;
  const hash = value.indexOf('#');
  const url = hash < 0 ? value : value.slice(0, hash);
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = withoutCredentialParams(url.slice(q + 1));
  return query === '' ? url.slice(0, q) : `${url.slice(0, q)}?${query}`;
}

/** Hop-by-hop and size headers: the connection's, not the request's; a new request has its own. */
const HOP_HEADERS = ['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'te', 'trailer', 'upgrade', 'expect', 'content-encoding'];

/** Headers kept per request at most (hooks.keepBodies), and their text (names and values) in bytes at most. */
export const KEPT_HEADERS_MAX = 64;
export const KEPT_HEAD_BYTES = 8 * 1024;

/**
 * The header names never kept nor sent again besides those {@link isCredentialName} names: the
 * header of each mapping's `verify.header` (scheme `hmac`, which may be named anything), and the
 * hop-by-hop and size headers.
 */
export function credentialHeaders(mappings: readonly MappingConfig[]): Set<string> {
  const drop = new Set(HOP_HEADERS);
  for (const m of mappings) if (m.verify?.header) drop.add(m.verify.header.toLowerCase());
  return drop;
}

/** Whether a (lower-case) header is never kept: a credential, or one {@link credentialHeaders} names. */
function dropped(name: string, drop: ReadonlySet<string>): boolean {
  return drop.has(name) || isCredentialName(name);
}

/**
 * A request's headers and query without a credential ({@link isCredentialName},
 * {@link credentialHeaders}), a URL repeated in a header without its credential parameters.
 * Header names lower case.
 */
export function withoutCredentials(req: { headers?: Record<string, string>; query?: Record<string, string> }, mappings: readonly MappingConfig[]): { headers: Record<string, string>; query: Record<string, string> } {
  const drop = credentialHeaders(mappings);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers ?? {})) {
    const name = k.toLowerCase();
    if (!dropped(name, drop)) headers[name] = shownHeaderValue(name, v);
  }
  const query = Object.fromEntries(Object.entries(req.query ?? {}).filter(([k]) => !isCredentialName(k)));
  return { headers, query };
}

/**
 * What the request log keeps of a request's head beside its body: its headers but those
 * {@link dropped}, each whole or not at all (a URL repeated in a header without its credential
 * parameters), at most {@link KEPT_HEADERS_MAX} of them and {@link KEPT_HEAD_BYTES} of names,
 * values and query together (the query first, without credential parameters; one longer than
 * that is not kept), so a stranger's headers are never stored unbounded.
 */
export function keptHead(given: Record<string, string | string[] | undefined>, query: string, drop: ReadonlySet<string>): { headers: Record<string, string>; query?: string } {
  let room = KEPT_HEAD_BYTES;
  const q = withoutCredentialParams(query);
  const kept: { headers: Record<string, string>; query?: string } = { headers: {} };
  if (q !== '' && Buffer.byteLength(q) <= room) {
    kept.query = q;
    room -= Buffer.byteLength(q);
  }
  let count = 0;
  for (const [name, raw] of Object.entries(given)) {
    if (raw === undefined || dropped(name, drop)) continue;
    const value = shownHeaderValue(name, Array.isArray(raw) ? raw.join(', ') : raw);
    const size = Buffer.byteLength(name) + Buffer.byteLength(value);
    if (count >= KEPT_HEADERS_MAX) break;
    if (size > room) continue;
    kept.headers[name] = value;
    room -= size;
    count++;
  }
  return kept;
}
