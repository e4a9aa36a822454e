import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MAX_TOKENS } from '../config/schema.js';
import type { HookCredential } from '../config/token.js';
import { createAddressCounts, type AddressCounts } from './address-counts.js';

/** Failed attempts from one address within the window before it gets 429 (CONTRACT.md §4). */
const MAX_FAILURES = 20;
const WINDOW_MS = 60_000;
/** Bounds the failure table so that a spray of addresses cannot grow it without limit. */
const MAX_TRACKED = 50_000;

/** The credential a route takes (CONTRACT.md §4); `either` where no route exists. */
export type CredentialKind = 'hooks' | 'admin' | 'either';

/** What a failed attempt guessed at (CONTRACT.md §4, §8): a token, a signature standing in for one, or a `verifyToken`. */
export type FailureKind = CredentialKind | 'verifyToken';

/** A right credential clears the failures of its own kind only (CONTRACT.md §4); `either` ones end with their window. */
export type PassKind = Exclude<FailureKind, 'either'>;

const FAILURE_KINDS: readonly FailureKind[] = ['hooks', 'admin', 'verifyToken', 'either'];

/** Who a valid hooks token says sent the request: a scoped entry's name and routes (`hooks.tokens[]`). */
export interface Sender {
  name?: string;
  /** The send routes it reaches (`wake`, `agent`, mapping ids); undefined: every one. */
  routes?: ReadonlySet<string>;
}

export type AuthVerdict =
  | { ok: true; bySignature?: true; sender?: Sender }
  | { ok: false; code: 'unauthorized' | 'rate_limited'; retryAfter?: number };

const PASSED: AuthVerdict = Object.freeze({ ok: true });
const BY_SIGNATURE: AuthVerdict = Object.freeze({ ok: true, bySignature: true });

export interface Credentials {
  hooks: readonly HookCredential[];
  admin: readonly string[];
}

/** The token check and the failure budget, shared by the gate, the console and the signature check (signatures.ts). */
export type Auth = ReturnType<typeof createAuth>;

/**
 * Token check and the per-address failure budget. A presented token's digest is compared with all
 * {@link MAX_TOKENS} slots, no early exit: neither time nor length tells which matched, or how many there are.
 */
export function createAuth(credentials: Credentials, allowQueryToken: boolean, now: () => number = Date.now) {
  const hooks = credentials.hooks.filter((c) => c.token !== '');
  const admin = credentials.admin.filter((t) => t !== '');
  if (hooks.length > MAX_TOKENS || admin.length > MAX_TOKENS) throw new Error(`at most ${MAX_TOKENS} tokens of each kind`);
  const hookSlots = slots(hooks.map((c) => c.token));
  const adminSlots = slots(admin);
  const hookVerdicts: AuthVerdict[] = hooks.map((c) => (c.name === undefined && c.routes === undefined
    ? PASSED
    : Object.freeze({ ok: true as const, sender: Object.freeze({ name: c.name, routes: c.routes && new Set(c.routes) }) })));
  const failures = Object.fromEntries(FAILURE_KINDS.map((k) => [k, createAddressCounts(WINDOW_MS, MAX_TRACKED)])) as Record<FailureKind, AddressCounts>;

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

  /** The verdict of a presented token for a route taking `kind`; undefined when it is wrong there. */
  function pass(given: string, kind: CredentialKind, address: string): AuthVerdict | undefined {
    const d = digest(given);
    if (kind !== 'admin') {
      const i = indexIn(d, hookSlots);
      if (i >= 0 && i < hookVerdicts.length) {
        passed(address, 'hooks');
        return hookVerdicts[i];
      }
    }
    if (kind !== 'hooks' && indexIn(d, adminSlots) >= 0) {
      passed(address, 'admin');
      return PASSED;
    }
    return undefined;
  }

  /** A right credential of `kind`: never blocked, and clears the address's failures of that kind. */
  function passed(address: string, kind: PassKind): void {
    failures[kind].forget(address);
  }

  /** A failed attempt: 401, or 429 once the address's failures of every kind pass {@link MAX_FAILURES} in the window. */
  function failed(address: string, kind: FailureKind): AuthVerdict & { ok: false } {
    const t = now();
    let count = 0;
    let resetAt = t;
    for (const k of FAILURE_KINDS) {
      const entry = k === kind ? failures[k].hit(address, t) : failures[k].peek(address, t);
      if (entry === undefined) continue;
      count += entry.count;
      // Retry-After: when every window counting now has ended.
      if (entry.resetAt > resetAt) resetAt = entry.resetAt;
    }
    if (count > MAX_FAILURES) {
      return { ok: false, code: 'rate_limited', retryAfter: Math.max(1, Math.ceil((resetAt - t) / 1000)) };
    }
    return { ok: false, code: 'unauthorized' };
  }

  return {
    /** The gate's decision for a route taking `kind`; with `signatureMayStandIn` (`auth: signature`) no token passes `bySignature`, uncounted. */
    check(req: IncomingMessage, query: string, address: string, kind: CredentialKind, signatureMayStandIn = false): AuthVerdict {
      const given = presented(req, query);
      const verdict = given === undefined ? undefined : pass(given, kind, address);
      if (verdict !== undefined) return verdict;
      return signatureMayStandIn ? BY_SIGNATURE : failed(address, kind);
    },
    /** A token given other than in headers or query (the console's sign-in form), with the same budget. */
    verify(given: string, address: string, kind: CredentialKind): AuthVerdict {
      return pass(given, kind, address) ?? failed(address, kind);
    },
    failed,
    passed,
  };
}

/** {@link MAX_TOKENS} digests: the tokens', then random ones that nothing presented can match. */
function slots(tokens: readonly string[]): Buffer[] {
  return Array.from({ length: MAX_TOKENS }, (_, i) => (i < tokens.length ? digest(tokens[i]!) : randomBytes(32)));
}

/** The slot `d` equals, or -1: every slot compared, no early exit, the index kept without a branch on the secret. */
function indexIn(d: Buffer, slots: readonly Buffer[]): number {
  let idx = -1;
  for (let i = 0; i < MAX_TOKENS; i++) {
    const eq = timingSafeEqual(d, slots[i]!);
    idx = eq ? i : idx;
  }
  return idx;
}

/** SHA-256 of a secret: digests of any two lengths compare in constant time. */
export function digest(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}
