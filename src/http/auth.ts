import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_TOKENS } from '../config/schema.js';
import { createAddressCounts } from './address-counts.js';

/** Failed attempts from one address within the window before it gets 429 (CONTRACT.md §4). */
export const MAX_FAILURES = 20;
export const WINDOW_MS = 60_000;
/** Bounds the failure table so that a spray of addresses cannot grow it without limit. */
const MAX_TRACKED = 50_000;

export type AuthVerdict =
  | { ok: true; bySignature?: true }
  | { ok: false; code: 'unauthorized' | 'rate_limited'; retryAfter?: number };

const PASSED: AuthVerdict = Object.freeze({ ok: true });
const BY_SIGNATURE: AuthVerdict = Object.freeze({ ok: true, bySignature: true });

/** The token check and the failure budget, shared by the gate and the signature check (signatures.ts). */
export interface Auth {
  /**
   * The gate's one decision on a request under the hooks path. `signatureMayStandIn`: the
   * route takes a signature in place of the token (`auth: signature`); a request without a
   * right token is then let through `bySignature`, not counted yet — its signature decides,
   * through {@link Auth.failed} or {@link Auth.passed}, once the body is read.
   * `query` is the raw query string without `?` ('' when there is none).
   */
  check(req: IncomingMessage, query: string, address: string, signatureMayStandIn?: boolean): AuthVerdict;
  /**
   * A token given other than in a request's headers or query (the console's sign-in form):
   * the same comparison and the same failure budget as {@link Auth.check}.
   */
  verify(given: string, address: string): AuthVerdict;
  /** A failed attempt from `address` (a wrong signature counts like a wrong token): 401 or 429. */
  failed(address: string): AuthVerdict & { ok: false };
  /** A successful one: clears the address's count. */
  passed(address: string): void;
}

/**
 * Token check and the per-address failure budget. The configured tokens (`hooks.tokens`, or
 * the one `hooks.token`) are hashed once; each presented token is hashed and compared with
 * timingSafeEqual against {@link MAX_TOKENS} slots — every slot, without stopping at a match,
 * the unused ones holding random digests — so that neither the comparison, the digest length
 * nor the time taken tells anything about the tokens: not which one matched, nor how many
 * there are.
 */
export function createAuth(tokens: readonly string[], allowQueryToken: boolean, now: () => number = Date.now): Auth {
  if (tokens.length === 0 || tokens.length > MAX_TOKENS) throw new Error(`between 1 and ${MAX_TOKENS} tokens, got ${tokens.length}`);
  const slots = Array.from({ length: MAX_TOKENS }, (_, i) => (i < tokens.length ? digest(tokens[i]) : randomBytes(32)));
  const failures = createAddressCounts(WINDOW_MS, MAX_TRACKED);

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

  function matches(given: string): boolean {
    const d = digest(given);
    let ok = false;
    for (let i = 0; i < MAX_TOKENS; i++) ok = timingSafeEqual(d, slots[i]) || ok;
    return ok;
  }

  function passed(address: string): void {
    // A right token is never blocked, and clears the address's count.
    failures.forget(address);
  }

  function failed(address: string): AuthVerdict & { ok: false } {
    const t = now();
    const entry = failures.hit(address, t);
    if (entry.count > MAX_FAILURES) {
      return { ok: false, code: 'rate_limited', retryAfter: Math.max(1, Math.ceil((entry.resetAt - t) / 1000)) };
    }
    return { ok: false, code: 'unauthorized' };
  }

  return {
    check(req, query, address, signatureMayStandIn = false) {
      const given = presented(req, query);
      if (given !== undefined && matches(given)) {
        passed(address);
        return PASSED;
      }
      return signatureMayStandIn ? BY_SIGNATURE : failed(address);
    },
    verify(given, address) {
      if (!matches(given)) return failed(address);
      passed(address);
      return PASSED;
    },
    failed,
    passed,
  };
}

// One-shot hash (Node ≥ 20.12): no Hash object per request, ~3x cheaper than createHash().
// https://nodejs.org/api/crypto.html#cryptohashalgorithm-data-outputencoding
function digest(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}
