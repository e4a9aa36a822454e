import { SECRET_HEADERS } from './config/schema.js';
import type { MappingConfig } from './config/types.js';
import { withoutToken } from './engine/context.js';

/**
 * What of a request is a credential, or is not the request's own to send again — shared by the
 * request log (http/request-log.ts, which keeps a request's headers and query beside its kept
 * body), the fixtures made from it (fixtures/from-request.ts) and the console's replay
 * (http/replay.ts).
 */

/** Hop-by-hop and size headers: the connection's, not the request's; a new request has its own. */
const HOP_HEADERS = ['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'te', 'trailer', 'upgrade', 'expect', 'content-encoding'];

/** Headers kept per request at most (hooks.keepBodies), and their text (names and values) in bytes at most. */
export const KEPT_HEADERS_MAX = 64;
export const KEPT_HEAD_BYTES = 8 * 1024;

/**
 * The header names never kept nor sent again: the token headers and cookies (config/schema.ts
 * SECRET_HEADERS, which also names every signature header of the `verify` schemes and the
 * console's replay marker), the header of each mapping's `verify.header` (scheme `hmac`), and
 * the hop-by-hop and size headers. `x-hub-signature*` is dropped by prefix ({@link dropped}).
 */
export function credentialHeaders(mappings: readonly MappingConfig[]): Set<string> {
  const drop = new Set([...SECRET_HEADERS, ...HOP_HEADERS]);
  for (const m of mappings) if (m.verify?.header) drop.add(m.verify.header.toLowerCase());
  return drop;
}

/** Whether a (lower-case) header name is one {@link credentialHeaders} names. */
function dropped(name: string, drop: ReadonlySet<string>): boolean {
  return drop.has(name) || name.startsWith('x-hub-signature');
}

/**
 * A request's headers and query without a credential ({@link credentialHeaders}) and without
 * the `token` query parameter. Header names lower case.
 */
export function withoutCredentials(req: { headers?: Record<string, string>; query?: Record<string, string> }, mappings: readonly MappingConfig[]): { headers: Record<string, string>; query: Record<string, string> } {
  const drop = credentialHeaders(mappings);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers ?? {})) {
    const name = k.toLowerCase();
    if (!dropped(name, drop)) headers[name] = v;
  }
  const query = Object.fromEntries(Object.entries(req.query ?? {}).filter(([k]) => k !== 'token'));
  return { headers, query };
}

/**
 * What the request log keeps of a request's head beside its body: its headers but those
 * {@link credentialHeaders} names, each whole or not at all, at most {@link KEPT_HEADERS_MAX}
 * of them and {@link KEPT_HEAD_BYTES} of names, values and query together (the query first;
 * one longer than that is not kept), so a stranger's headers are never stored unbounded.
 */
export function keptHead(given: Record<string, string | string[] | undefined>, query: string, drop: ReadonlySet<string>): { headers: Record<string, string>; query?: string } {
  let room = KEPT_HEAD_BYTES;
  // The gate's own reading of what a token parameter is (engine/context.ts), so both agree.
  const q = withoutToken(query);
  const kept: { headers: Record<string, string>; query?: string } = { headers: {} };
  if (q !== '' && Buffer.byteLength(q) <= room) {
    kept.query = q;
    room -= Buffer.byteLength(q);
  }
  let count = 0;
  for (const [name, raw] of Object.entries(given)) {
    if (raw === undefined || dropped(name, drop)) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const size = Buffer.byteLength(name) + Buffer.byteLength(value);
    if (count >= KEPT_HEADERS_MAX) break;
    if (size > room) continue;
    kept.headers[name] = value;
    room -= size;
    count++;
  }
  return kept;
}
