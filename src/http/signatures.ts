import type { IncomingMessage } from 'node:http';
import type { MappingConfig } from '../config/types.js';
import { HookError } from '../errors.js';
import type { Auth } from './auth.js';
import type { Signed } from '../engine/decide.js';
import { append } from '../append.js';
import { sender } from '../senders/index.js';
import type { SenderDescriptor, VerifyInput } from '../senders/descriptor.js';
import { compileVerifier, type SignatureFailure, type Verifier } from '../senders/verify.js';
import { createHandshakes, type HookSecrets } from './handshakes.js';

/** The one place a sender's signature is verified (engine/decide.ts calls it), and its handshake answered (handshakes.ts). */
export type Signatures = ReturnType<typeof createSignatures>;

export interface SignedRequest {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  /** The request target as it arrived (path and query, a token included): what URL-signing senders sign, after the public URL, and where a handshake reads its own parameters (Meta's `hub.verify_token`). */
  target: string;
  headers: IncomingMessage['headers'];
  bySignature: boolean;
  /** A scoped hooks token's routes; undefined: every one. */
  routes?: ReadonlySet<string>;
  /** The client's address, asked only when a signature stood in for the token (the failure budget). */
  address: () => string;
}

interface Entry {
  id: string;
  method: string;
  verify: Verifier | ((req: VerifyInput) => Promise<SignatureFailure | undefined>);
  standsIn: boolean;
  sender: SenderDescriptor;
  /** The URL the sender was given (`verify.url`), else undefined: server.publicUrl + the request's path and query. */
  url?: string;
}

const NONE_SIGNED: ReadonlySet<string> = new Set();

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

/** The `verify` of every mapping (secrets decoded once), by NAME: the loader guarantees a `match.path`. */
export function createSignatures(mappings: readonly MappingConfig[], deps: { auth: Pick<Auth, 'passed' | 'failed'>; publicUrl?: string; secrets?: HookSecrets }) {
  const byName = new Map<string, Entry[]>();
  for (const m of mappings) {
    if (!m.verify || m.match.path === undefined) continue;
    const d = sender(m.verify.scheme);
    const verify = d.credential === 'handshake' ? keptVerifier(d, m.id, deps.secrets) : compileVerifier(d, m.verify);
    const entry = { id: m.id, method: m.match.method ?? 'POST', verify, standsIn: m.auth === 'signature', sender: d, url: m.verify.url };
    append(byName, m.match.path, entry);
  }
  const standsIn = new Set([...byName].flatMap(([name, list]) => list.filter((e) => e.standsIn).map((e) => `${e.method} ${name}`)));
  const handshakes = createHandshakes(mappings, (scheme) => sender(scheme).handshake, deps);

  return {
    /** True when NAME has an `auth: signature` mapping taking `method`: the gate lets a request without the token through. */
    standsIn: (name: string, method: string): boolean => standsIn.has(`${method} ${name}`),
    /** True when NAME has a mapping whose sender's handshake is a GET (Meta's, Dropbox's): the gate takes it, not 405. */
    takesGet: handshakes.takesGet,

    /** NAME's mappings whose `verify` passes on the raw bytes (or a handshake answered), undefined when none has one; else throws 401 (429). */
    async check(req: SignedRequest, body: Uint8Array, payload: () => Promise<unknown>): Promise<Signed | undefined> {
      const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      const input = handshakes.on(req.name) ? { ...req, query: queryOf(req.target), body: bytes } : undefined;
      const own = input && (await handshakes.own(input));
      if (own) return { signedBy: NONE_SIGNED, handshake: own };
      const list = byName.get(req.name)?.filter((e) => e.method === req.method);
      if (list === undefined || list.length === 0) return undefined;
      const now = Math.floor(Date.now() / 1000);
      let signed: Signed | undefined;
      let failed: SignatureFailure[] | undefined;
      for (const e of list) {
        if (req.bySignature && !e.standsIn) continue;
        const url = e.sender.signsUrl ? signedUrl(req.target, deps.publicUrl, e.url) : undefined;
        const f = await e.verify({ method: req.method, url, headers: req.headers, body: bytes, now });
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
      if (signed) {
        const handshake = input && (await handshakes.signed(input, signed.signedBy, payload));
        if (handshake) signed.handshake = handshake;
        return signed;
      }
      // A stale but authentic signature says more than a wrong one: it is the answer.
      const fails = failed ?? [];
      const stale = fails.find((f) => f.code === 'stale_signature');
      const message = stale?.message ?? [...new Set(fails.map((f) => f.message))].join('; and ');
      throw new HookError(stale ? 'stale_signature' : 'invalid_signature', `${req.method} ${req.path} needs a valid signature: ${message}`);
    },
  };
}

/** A scheme whose secret its sender gave in a handshake (Asana): verified with the one kept for the mapping, read at each request. */
function keptVerifier(d: SenderDescriptor, id: string, secrets: HookSecrets | undefined) {
  const none: SignatureFailure = { code: 'invalid_signature', message: `mapping "${id}" keeps no secret yet: the sender gives it in its handshake when the webhook is created (${d.checks})` };
  let compiled: { secret: string; verify: Verifier } | undefined;
  return async (req: VerifyInput): Promise<SignatureFailure | undefined> => {
    const secret = await secrets?.hookSecret(id);
    if (secret === undefined) return none;
    if (compiled?.secret !== secret) compiled = { secret, verify: compileVerifier(d, { scheme: d.scheme, secret }) };
    return compiled.verify(req);
  };
}

/** The query of a request target, without `?`. */
function queryOf(target: string): string {
  const q = target.indexOf('?');
  return q === -1 ? '' : target.slice(q + 1);
}
