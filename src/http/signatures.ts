import type { IncomingMessage } from 'node:http';
import type { MappingConfig } from '../config/types.js';
import { HookError } from '../errors.js';
import type { Auth } from './auth.js';
import type { Exchange } from './exchange.js';
import { compileVerifier, signedIdHeader, type SignatureFailure, type SignedIdHeader, type Verifier } from './verify/schemes.js';

/** The mapping ids whose `verify` passed on a request's raw body. */
export type SignedBy = ReadonlySet<string>;

export interface Signatures {
  /** True when NAME has an `auth: signature` mapping taking `method`: the gate lets a request without the token through. */
  standsIn(name: string, method: string): boolean;
  /**
   * The body step (between reading and parsing): tries the `verify` of every mapping whose
   * `match.path` is the route's NAME, and that takes the request's method, on the raw bytes — only the `auth: signature` ones when
   * the request came without the token. Undefined when NAME has no such mapping; else the
   * ids that verified. A verified signature that also signed a message id (standard-webhooks:
   * `webhook-id`, `svix-id`) makes that id the request's idempotency key (`signedKey` on its
   * record; idempotency.ts), which no unsigned key header can then replace (CONTRACT.md §8).
   * Throws 401 `invalid_signature` / `stale_signature` when none did (429 `rate_limited` past
   * the failure budget, when the signature stood in for the token).
   */
  check(ex: Exchange, body: Buffer): SignedBy | undefined;
  /**
   * Admission to a mapping, before its `match.when` and anything is rendered: it must be one
   * whose signature verified when it has `verify`, and an `auth: signature` one when the
   * request came without the token. Undefined when admitted; else the refusal, 401
   * `invalid_signature` (`unauthorized` without the token).
   */
  refusal(ex: Exchange, signedBy: SignedBy, mappingId: string): HookError | undefined;
}

interface Entry {
  id: string;
  /** `match.method`: a mapping's signature is checked on the requests it takes. */
  method: string;
  verify: Verifier;
  standsIn: boolean;
  /** The header holding the message id the signature covers, for schemes that sign one. */
  signedId: ((headers: IncomingMessage['headers']) => SignedIdHeader | undefined) | undefined;
}

/**
 * Compiles the `verify` of every mapping (secrets decoded once) into a table by NAME, built
 * when the listener is created. The loader guarantees that a mapping with `verify` has a
 * `match.path`: the signature is checked before the body is parsed, when only the path says
 * which mapping the request is for.
 */
export function createSignatures(mappings: readonly MappingConfig[], deps: { auth: Auth; clientAddress: (req: IncomingMessage) => string; now?: () => number }): Signatures {
  const clock = deps.now ?? Date.now;
  const byName = new Map<string, Entry[]>();
  const byId = new Map<string, Entry>();
  for (const m of mappings) {
    if (!m.verify || m.match.path === undefined) continue;
    const entry = { id: m.id, method: m.match.method ?? 'POST', verify: compileVerifier(m.verify), standsIn: m.auth === 'signature', signedId: signedIdHeader(m.verify) };
    byId.set(m.id, entry);
    const list = byName.get(m.match.path) ?? [];
    list.push(entry);
    byName.set(m.match.path, list);
  }
  const standsIn = new Set([...byName].flatMap(([name, list]) => list.filter((e) => e.standsIn).map((e) => `${e.method} ${name}`)));

  return {
    standsIn: (name, method) => standsIn.has(`${method} ${name}`),

    check(ex, body) {
      const { req, bySignature } = ex;
      const route = ex.route!;
      const named = route.kind === 'mapped' ? byName.get(route.name) : undefined;
      const list = named?.filter((e) => e.method === req.method);
      if (list === undefined || list.length === 0) return undefined;
      const now = Math.floor(clock() / 1000);
      let signed: Set<string> | undefined;
      let failed: SignatureFailure[] | undefined;
      for (const e of list) {
        if (bySignature && !e.standsIn) continue;
        const f = e.verify(req.headers, body, now);
        if (f === undefined) {
          (signed ??= new Set()).add(e.id);
          const idHeader = e.signedId?.(req.headers);
          if (idHeader !== undefined) ex.signedKey = idHeader;
        } else {
          (failed ??= []).push(f);
        }
      }
      // Standing in for the hooks token, a signature is the sender's credential: its failures
      // and its passes are of the hooks token's kind (auth.ts FailureKind).
      if (bySignature) {
        if (signed) {
          deps.auth.passed(deps.clientAddress(req), 'hooks');
        } else {
          const verdict = deps.auth.failed(deps.clientAddress(req), 'hooks');
          if (verdict.code === 'rate_limited') {
            throw new HookError('rate_limited', 'too many failed attempts from this address; retry later', { 'retry-after': String(verdict.retryAfter) });
          }
        }
      }
      if (signed) return signed;
      // A stale but authentic signature says more than a wrong one: it is the answer.
      const fails = failed ?? [];
      const stale = fails.find((f) => f.code === 'stale_signature');
      const message = stale?.message ?? [...new Set(fails.map((f) => f.message))].join('; and ');
      throw new HookError(stale ? 'stale_signature' : 'invalid_signature', `POST ${route.path} needs a valid signature: ${message}`);
    },

    refusal(ex, signedBy, mappingId) {
      const e = byId.get(mappingId);
      if (ex.bySignature && !e?.standsIn) {
        return new HookError('unauthorized', `this payload matched mapping "${mappingId}", which does not take a signature in place of the token: send the hooks token`);
      }
      if (e && !signedBy.has(mappingId)) {
        return new HookError('invalid_signature', `this payload matched mapping "${mappingId}", whose own verify does not pass: sign the request with its verify.secret`);
      }
      return undefined;
    },
  };
}
