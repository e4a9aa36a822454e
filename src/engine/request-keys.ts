import type { Action } from '../action.js';
import { HookError } from '../errors.js';
import { IDEMPOTENCY_HEADERS, checkIdempotencyKey, requestHash, scopedKeyHash } from '../idempotency-key.js';

/** The first answers kept for keys (the store's `findKeys`), injected into decide(). */
export type KeyLookup = (hashes: string[]) => Promise<readonly (KeptAnswer | undefined)[]>;

/** A first answer an idempotency key keeps (the store's row). */
export interface KeptAnswer {
  requestHash: string;
  status: number;
  body: string;
}

/** A key ready for the store: the scoped key's hash and the fingerprint of what it guards. */
export interface RequestKey {
  key: string;
  requestHash: string;
}

/** A forEach item's key and, when it was acted on before, its first answer (`replayed: true`). */
export interface Item {
  key?: RequestKey;
  replayed?: Record<string, unknown>;
}

/** forEach with an `idempotencyKey` template (CONTRACT.md §8): each item's key is looked up, so a retried batch acts only on the rest. */
export async function itemsOf(actions: readonly Action[], route: string, raw: Uint8Array, keys: KeyLookup | undefined): Promise<Item[]> {
  const items: Item[] = actions.map((a) => (a.idempotency ? { key: requestKey(route, a.idempotency.key, a.idempotency.item ?? raw) } : {}));
  const asked = items.flatMap((it, i) => (it.key ? [i] : []));
  if (keys === undefined || asked.length === 0) return items;
  const stored = await keys(asked.map((i) => items[i]!.key!.key));
  asked.forEach((i, j) => {
    const s = stored[j];
    if (!s) return;
    checkSameRequest(s, items[i]!.key!, `actions[${i}].idempotencyKey`);
    items[i]!.replayed = { ...(JSON.parse(s.body) as Record<string, unknown>), replayed: true };
  });
  return items;
}

/** The request's header key; a message id the valid signature covered wins, as an unsigned header could be replayed changed (CONTRACT.md §8). */
export function headerKey(headers: Record<string, string | string[] | undefined>, signed: string | undefined): string | undefined {
  if (signed !== undefined) return checkIdempotencyKey(String(headers[signed]), `header ${signed}`);
  for (const name of IDEMPOTENCY_HEADERS) {
    const value = headers[name];
    if (value === undefined || value === '') continue;
    return checkIdempotencyKey(Array.isArray(value) ? value.join(', ') : value, `header ${name}`);
  }
  return undefined;
}

/** An `/agent` body's own `idempotencyKey`, as OpenClaw clients send it (CONTRACT.md §8). */
export function bodyKey(payload: Record<string, unknown>, raw: Uint8Array): RequestKey | undefined {
  const given = payload.idempotencyKey;
  if (given === undefined || given === null) return undefined;
  if (typeof given !== 'string') throw new HookError('invalid_payload', 'idempotencyKey must be a string');
  const key = checkIdempotencyKey(given.trim(), 'idempotencyKey');
  return key === undefined ? undefined : requestKey('agent', key, raw);
}

/** `key` scoped to `route` (`wake`, `agent`, `mapping:<id>`), guarding `what` (the body bytes, or a forEach item's JSON). */
export function requestKey(route: string, key: string, what: Uint8Array | string): RequestKey {
  return { key: scopedKeyHash(route, key), requestHash: requestHash(route, what) };
}

/** Throws 422 `idempotency_key_reused` unless `stored` was kept for the same request. */
export function checkSameRequest(stored: KeptAnswer, key: RequestKey, label: string): void {
  if (stored.requestHash !== key.requestHash) {
    throw new HookError('idempotency_key_reused', `${label}: this key was already used for a different request on this route; a repeat must send the same body, a new request needs a new key`);
  }
}

