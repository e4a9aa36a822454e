import { createHash } from 'node:crypto';
import { HookError } from './errors.js';

/**
 * Idempotency keys (CONTRACT.md §8): the rules both floors apply — the listener to a key from
 * a header, the engine to a key rendered from a mapping's `idempotencyKey` template — so they
 * live below both, like errors.ts.
 */

/**
 * Request headers that carry a key, lower-case, in the order the first present one wins — unless
 * the request's valid signature covered a message id: then that id is the key (CONTRACT.md §8,
 * http/idempotency.ts `headerKey`).
 */
export const IDEMPOTENCY_HEADERS = ['idempotency-key', 'x-openclaw-idempotency-key', 'webhook-id', 'x-github-delivery'] as const;

/** The longest key taken (Stripe's and the IETF draft's limit). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// C0 controls, DEL and C1 controls: a key is an identifier, never text with line breaks.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A key as given (a header value or a rendered template), checked: `undefined` when blank
 * ("no key"), else the key itself. Throws 400 `invalid_payload` naming `label` when it is too
 * long or holds a control character; the message never quotes the key.
 */
export function checkIdempotencyKey(value: string, label: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new HookError('invalid_payload', `${label}: must have at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (got ${value.length})`);
  }
  if (CONTROL.test(value)) throw new HookError('invalid_payload', `${label}: must not contain control characters`);
  return value;
}

/**
 * What the store keeps of a key: the SHA-256 of its route and the key, so that the same key on
 * two hooks is two keys, the stored index entry has a fixed size whatever the key, and keys
 * (which often carry e-mail ids or customer references) are not kept in clear at rest.
 */
export function scopedKeyHash(route: string, key: string): string {
  return createHash('sha256').update(route).update('\n').update(key).digest('hex');
}

/** The fingerprint of what a key guards: method, route and the bytes (or JSON) it was given. */
export function requestHash(route: string, bytes: Uint8Array | string): string {
  return createHash('sha256').update('POST\n').update(route).update('\n').update(bytes).digest('hex');
}
