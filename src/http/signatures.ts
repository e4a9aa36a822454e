import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { MappingConfig } from '../config/types.js';
import { HookError } from '../errors.js';
import { digest, type Auth } from './auth.js';
import { answer, refuse } from './answer.js';
import type { Exchange } from './exchange.js';
import { mappingLabel } from './routes-table.js';
import type { Signed } from '../engine/decide.js';
import { sender } from '../senders/index.js';
import type { SenderDescriptor } from '../senders/descriptor.js';
import { compileVerifier, type SignatureFailure, type Verifier } from '../senders/verify.js';

/**
 * The signature checks of a config's mappings: the one place a sender's signature is verified
 * (engine/decide.ts calls it); and Meta's verification GET (scheme `meta`, CONTRACT.md §8), answered
 * with no action before any body is read (Slack's signed `url_verification` is the engine's).
 */
export type Signatures = ReturnType<typeof createSignatures>;

export interface SignedRequest {
  name: string;
  method: string;
  path: string;
  /** The request target as it arrived (path and query, a token included): what URL-signing senders sign, after the public URL. */
  target: string;
  headers: IncomingMessage['headers'];
  bySignature: boolean;
  /** The client's address, asked only when a signature stood in for the token (the failure budget). */
  address: () => string;
}

interface Entry {
  id: string;
  method: string;
  verify: Verifier;
  standsIn: boolean;
  sender: SenderDescriptor;
  /** The URL the sender was given (`verify.url`), else undefined: server.publicUrl + the request's path and query. */
  url?: string;
}

// Absolute-form (RFC 9112 §3.2.2): the authority is not the URL the sender was given.
const AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * The URL a URL-signing sender signed (CONTRACT.md §15): `verify.url`, else `server.publicUrl`
 * joined with the path as it arrived — then the query as it arrived, a `?token=` included, since
 * the sender signs the whole URL it was given; undefined without either.
 */
export function signedUrl(target: string, publicUrl: string | undefined, verifyUrl: string | undefined): string | undefined {
  const rest = target.replace(AUTHORITY, '');
  const q = rest.indexOf('?');
  const base = verifyUrl ?? (publicUrl === undefined ? undefined : publicUrl.replace(/\/+$/, '') + (q === -1 ? rest : rest.slice(0, q)));
  return base === undefined ? undefined : base + (q === -1 ? '' : rest.slice(q));
}

/** A `meta` mapping and the digest of its verify.verifyToken (auth.ts digest()). */
type MetaEntry = { id: string; digest: Buffer };

/** The `verify` of every mapping (secrets decoded once), by NAME: the loader guarantees a `match.path`. */
export function createSignatures(mappings: readonly MappingConfig[], deps: { auth: Pick<Auth, 'passed' | 'failed'>; publicUrl?: string }) {
  const byName = new Map<string, Entry[]>();
  const meta = new Map<string, MetaEntry[]>();
  for (const m of mappings) {
    if (!m.verify || m.match.path === undefined) continue;
    if (m.verify.scheme === 'meta' && m.verify.verifyToken !== undefined) {
      meta.set(m.match.path, [...(meta.get(m.match.path) ?? []), { id: m.id, digest: digest(m.verify.verifyToken) }]);
    }
    const d = sender(m.verify.scheme);
    const entry = { id: m.id, method: m.match.method ?? 'POST', verify: compileVerifier(d, m.verify), standsIn: m.auth === 'signature', sender: d, url: m.verify.url };
    byName.set(m.match.path, [...(byName.get(m.match.path) ?? []), entry]);
  }
  const standsIn = new Set([...byName].flatMap(([name, list]) => list.filter((e) => e.standsIn).map((e) => `${e.method} ${name}`)));

  return {
    /** True when NAME has an `auth: signature` mapping taking `method`: the gate lets a request without the token through. */
    standsIn: (name: string, method: string): boolean => standsIn.has(`${method} ${name}`),
    /** True when NAME has a `meta` mapping: its GET (and HEAD) is Meta's verification request, not a 405. */
    takesGet: (name: string): boolean => meta.has(name),
    /** Answers Meta's verification GET once the gate checked the credential. https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests */
    answerMeta: (ex: Exchange, name: string, query: string, address: () => string): void => answerMeta(meta.get(name)!, deps.auth, ex, query, address),

    /** The ids of NAME's mappings whose `verify` passes on the raw bytes, undefined when none has one; else throws 401 (429 past the budget). */
    check(req: SignedRequest, body: Uint8Array): Signed | undefined {
      const list = byName.get(req.name)?.filter((e) => e.method === req.method);
      if (list === undefined || list.length === 0) return undefined;
      const now = Math.floor(Date.now() / 1000);
      const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      let signed: Signed | undefined;
      let failed: SignatureFailure[] | undefined;
      for (const e of list) {
        if (req.bySignature && !e.standsIn) continue;
        const url = e.sender.signsUrl ? signedUrl(req.target, deps.publicUrl, e.url) : undefined;
        const f = e.verify({ method: req.method, url, headers: req.headers, body: bytes, now });
        if (f !== undefined) {
          (failed ??= []).push(f);
          continue;
        }
        signed ??= { signedBy: new Set() };
        (signed.signedBy as Set<string>).add(e.id);
        const idHeader = e.sender.idHeader?.(req.headers);
        if (idHeader !== undefined) signed.signedKey = idHeader;
      }
      // Standing in for the hooks token, a signature counts as one (auth.ts FailureKind).
      if (req.bySignature) {
        if (signed) {
          deps.auth.passed(req.address(), 'hooks');
        } else {
          const verdict = deps.auth.failed(req.address(), 'hooks');
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
      throw new HookError(stale ? 'stale_signature' : 'invalid_signature', `${req.method} ${req.path} needs a valid signature: ${message}`);
    },
  };
}

function answerMeta(entries: MetaEntry[], auth: Pick<Auth, 'passed' | 'failed'>, ex: Exchange, query: string, clientAddress: () => string): void {
  ex.label = mappingLabel(entries[0]!.id);
  const params = new URLSearchParams(query);
  const challenge = params.get('hub.challenge');
  if (params.get('hub.mode') !== 'subscribe') {
    refuse(ex, 'invalid_payload', 'hub.mode must be subscribe: this GET answers Meta\'s verification request, GET {hooks.path}/NAME?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…');
    return;
  }
  if (challenge === null || challenge === '') {
    refuse(ex, 'invalid_payload', 'hub.challenge is missing: Meta\'s verification request sends the challenge to echo');
    return;
  }
  const given = digest(params.get('hub.verify_token') ?? '');
  // Every entry compared, without stopping at a match (auth.ts does the same for tokens).
  let match: MetaEntry | undefined;
  for (const e of entries) match = timingSafeEqual(given, e.digest) ? e : match;
  const reach = ex.sender?.routes;
  if (match && reach !== undefined && !reach.has(match.id)) {
    refuse(ex, 'forbidden', `this hooks token does not reach mapping "${match.id}": add it to the token's routes (hooks.tokens[].routes) or send with another token`);
    return;
  }
  const address = clientAddress();
  if (!match) {
    // A failed attempt of its own kind (CONTRACT.md §4, §8).
    const verdict = auth.failed(address, 'verifyToken');
    if (verdict.code === 'rate_limited') {
      refuse(ex, 'rate_limited', 'too many failed attempts from this address; retry later', { 'retry-after': String(verdict.retryAfter) });
      return;
    }
    refuse(ex, 'forbidden', 'hub.verify_token does not match the mapping\'s verify.verifyToken: type the same Verify Token into Meta\'s webhook settings');
    return;
  }
  ex.label = mappingLabel(match.id);
  auth.passed(address, 'verifyToken');
  // Exactly the challenge: Meta compares the body. nosniff: it is the sender's text, shown as text only.
  answer(ex, 200, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }, Buffer.from(challenge));
}
