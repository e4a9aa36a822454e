import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Failed attempts from one address within the window before it gets 429 (CONTRACT.md §4). */
export const MAX_FAILURES = 20;
export const WINDOW_MS = 60_000;
/** Bounds the failure table so that a spray of addresses cannot grow it without limit. */
const MAX_TRACKED = 50_000;

export type AuthVerdict = { ok: true } | { ok: false; code: 'unauthorized' | 'rate_limited'; retryAfter?: number };

/**
 * Token check and the per-address failure budget. The configured token is hashed once; each
 * presented token is hashed and compared with timingSafeEqual, so neither the comparison nor
 * the digest length tells anything about the token.
 */
export function createAuth(token: string, allowQueryToken: boolean, now: () => number = Date.now) {
  const expected = digest(token);
  const failures = new Map<string, { count: number; resetAt: number }>();

  function presented(req: IncomingMessage, query: string): string | undefined {
    const h = req.headers;
    const auth = h.authorization;
    if (auth !== undefined && auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') return auth.slice(7).trim();
    const header = h['x-hookrelay-token'] ?? h['x-openclaw-token'];
    if (typeof header === 'string') return header;
    if (allowQueryToken && query !== '') {
      const q = new URLSearchParams(query).get('token');
      if (q !== null) return q;
    }
    return undefined;
  }

  /** `query` is the raw query string without `?` ('' when there is none). */
  return function check(req: IncomingMessage, query: string, address: string): AuthVerdict {
    const given = presented(req, query);
    if (given !== undefined && timingSafeEqual(digest(given), expected)) {
      // A right token is never blocked, and clears the address's count.
      if (failures.size > 0) failures.delete(address);
      return { ok: true };
    }
    const t = now();
    let entry = failures.get(address);
    if (entry === undefined || entry.resetAt <= t) {
      if (failures.size >= MAX_TRACKED) sweep(t);
      entry = { count: 0, resetAt: t + WINDOW_MS };
      failures.set(address, entry);
    }
    entry.count++;
    if (entry.count > MAX_FAILURES) {
      return { ok: false, code: 'rate_limited', retryAfter: Math.max(1, Math.ceil((entry.resetAt - t) / 1000)) };
    }
    return { ok: false, code: 'unauthorized' };
  };

  function sweep(t: number) {
    for (const [addr, e] of failures) if (e.resetAt <= t) failures.delete(addr);
    // Still full of live entries: forget the oldest rather than grow (Map keeps insertion order).
    if (failures.size >= MAX_TRACKED) failures.delete(failures.keys().next().value as string);
  }
}

// One-shot hash (Node ≥ 20.12): no Hash object per request, ~3x cheaper than createHash().
// https://nodejs.org/api/crypto.html#cryptohashalgorithm-data-outputencoding
function digest(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}
