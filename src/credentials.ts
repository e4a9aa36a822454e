import { SECRET_HEADERS } from './config/schema.js';
import type { MappingConfig } from './config/types.js';

/** The one rule of what in a request is a credential (CONTRACT.md §8), for everything a request shows past the gate. */

/** `hmac` catches `X-Shopify-Hmac-Sha256`-style headers. */
const CREDENTIAL_NAME = /token|secret|signature|hmac|api[-_]?key|password|session|cookie|authorization/;
const NAMED: ReadonlySet<string> = new Set(SECRET_HEADERS);

export function isCredentialName(name: string): boolean {
  const lower = name.toLowerCase();
  return NAMED.has(lower) || CREDENTIAL_NAME.test(lower);
}

/** A proxy or client fills these with the request's URL, query (and so a `?token=`) included. */
const URL_HEADERS: ReadonlySet<string> = new Set(['referer', 'x-forwarded-uri', 'x-original-url', 'x-original-uri', 'x-rewrite-url', 'x-envoy-original-path']);

/** However a name is escaped (`to%6Ben`): names are decoded as URLSearchParams does. */
export function withoutCredentialParams(rawQuery: string): string {
  if (rawQuery === '') return rawQuery;
  return rawQuery.split('&').filter((pair) => pair !== '' && !isCredentialParam(pair)).join('&');
}

function isCredentialParam(pair: string): boolean {
  for (const [key] of new URLSearchParams(pair)) return isCredentialName(key);
  return false;
}

/** A header that repeats a URL without its credential parameters and fragment; any other as it is. */
export function shownHeaderValue(name: string, value: string): string {
  if (!URL_HEADERS.has(name)) return value;
  const hash = value.indexOf('#');
  const url = hash < 0 ? value : value.slice(0, hash);
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = withoutCredentialParams(url.slice(q + 1));
  return query === '' ? url.slice(0, q) : `${url.slice(0, q)}?${query}`;
}

/** The connection's, not the request's: a new request has its own. */
const HOP_HEADERS = ['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'te', 'trailer', 'upgrade', 'expect', 'content-encoding'];

export const KEPT_HEADERS_MAX = 64;
export const KEPT_HEAD_BYTES = 8 * 1024;

/** `verify.header` of scheme `hmac` may be named anything, so it is dropped by name. */
export function credentialHeaders(mappings: readonly MappingConfig[]): Set<string> {
  const drop = new Set(HOP_HEADERS);
  for (const m of mappings) if (m.verify?.header) drop.add(m.verify.header.toLowerCase());
  return drop;
}

function dropped(name: string, drop: ReadonlySet<string>): boolean {
  return drop.has(name) || isCredentialName(name);
}

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

/** Each header whole or not at all, within a count and a byte budget, so a stranger's headers are never stored unbounded. */
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
