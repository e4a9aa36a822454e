import { HookError } from '../errors.js';
import { IDEMPOTENCY_HEADERS, checkIdempotencyKey, requestHash, scopedKeyHash } from '../idempotency-key.js';
import type { StoredKey } from '../store/records.js';
import { answerJson } from './answer.js';
import type { Exchange } from './exchange.js';
import { answerMapping, fromStored } from './mapping-answer.js';

/**
 * Idempotency on the listener (CONTRACT.md §8): which key a request carries, and answering a
 * repeat with the first answer. Committing keys is the dispatcher's and the store's part
 * (`Runtime.commit`, `Store.accept`); this file only reads and replays.
 */

/** A key ready for the store: the scoped key's hash and the fingerprint of what it guards. */
export interface RequestKey {
  key: string;
  requestHash: string;
}

/** The header that says an answer is a replay of the first one. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * The request's key, checked; undefined when there is none. A message id the request's valid
 * signature covered (`webhook-id`, `svix-id`: the record's `signedKey`, signatures.ts) is the
 * key, whatever else was sent: an unsigned header could be changed by anyone replaying a
 * captured request, and would make it act again (CONTRACT.md §8). Otherwise the first
 * idempotency header present with a value (IDEMPOTENCY_HEADERS order). Header values are
 * trimmed by Node already.
 */
export function headerKey(ex: Exchange): string | undefined {
  const headers = ex.req.headers;
  const signed = ex.signedKey;
  if (signed !== undefined) return checkIdempotencyKey(String(headers[signed]), `header ${signed}`);
  for (const name of IDEMPOTENCY_HEADERS) {
    const value = headers[name];
    if (value === undefined || value === '') continue;
    return checkIdempotencyKey(Array.isArray(value) ? value.join(', ') : value, `header ${name}`);
  }
  return undefined;
}

/** `key` scoped to `route` (`wake`, `agent`, `mapping:<id>`), guarding `what` (the body bytes, or a forEach item's JSON). */
export function requestKey(route: string, key: string, what: Uint8Array | string): RequestKey {
  return { key: scopedKeyHash(route, key), requestHash: requestHash(route, what) };
}

/** Throws 422 `idempotency_key_reused` unless `stored` was made for the same request. */
export function checkSameRequest(stored: StoredKey, key: RequestKey, label: string): void {
  if (stored.requestHash !== key.requestHash) {
    throw new HookError(
      'idempotency_key_reused',
      `${label}: this key was already used for a different request on this route; a repeat must send the same body, a new request needs a new key`,
    );
  }
}

/** Marks the answer about to be written as a replay of a first answer (the header, and the request-log row). */
export function markReplayed(ex: Exchange): void {
  ex.replayed = true;
  ex.res.setHeader(REPLAYED_HEADER, 'true');
}

/** Answers with a stored first answer, marked as a replay. */
export function answerReplay(ex: Exchange, stored: StoredKey): void {
  markReplayed(ex);
  // A mapping's `response` is kept in its own envelope (mapping-answer.ts).
  const own = fromStored(stored.status, stored.body);
  if (own) answerMapping(ex, own);
  else answerJson(ex, stored.status, stored.body);
}
