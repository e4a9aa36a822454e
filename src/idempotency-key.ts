import { createHash } from 'node:crypto';
import { HookError } from './errors.js';

/** The key rules of CONTRACT.md §8, applied to a header's key and a rendered one alike. First present header wins. */
export const IDEMPOTENCY_HEADERS = ['idempotency-key', 'x-openclaw-idempotency-key', 'webhook-id', 'x-github-delivery'] as const;

/** Stripe's and the IETF draft's limit. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `undefined` when blank; 400 `invalid_payload` naming `label` otherwise, never quoting the key. */
export function checkIdempotencyKey(value: string, label: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new HookError('invalid_payload', `${label}: must have at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (got ${value.length})`);
  }
  if (CONTROL.test(value)) throw new HookError('invalid_payload', `${label}: must not contain control characters`);
  return value;
}

/** Route-scoped, fixed size, and not in clear at rest (keys often carry e-mail ids or customer references). */
export function scopedKeyHash(route: string, key: string): string {
  return createHash('sha256').update(route).update('\n').update(key).digest('hex');
}

export function requestHash(route: string, bytes: Uint8Array | string): string {
  return createHash('sha256').update('POST\n').update(route).update('\n').update(bytes).digest('hex');
}
