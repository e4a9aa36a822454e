import { createHash, createHmac, sign as signAsymmetric, timingSafeEqual, verify as verifyAsymmetric, type KeyObject } from 'node:crypto';
import type { Algorithm, Codec, Credential, Key, SenderDescriptor, VerifyInput, VerifyKeys } from './descriptor.js';

/** Why a request's signature was refused: the error code and a message that names no secret or signature. */
export interface SignatureFailure {
  code: 'invalid_signature' | 'stale_signature';
  message: string;
}

/** One mapping's compiled `verify`: undefined when the request carries a valid signature, else why not. */
export type Verifier = (req: VerifyInput) => SignatureFailure | undefined;

/** The keys of a `verify`: the descriptor's, else each secret's UTF-8 bytes. */
export function keysOf(d: SenderDescriptor, v: VerifyKeys): Key[] {
  return d.keys ? d.keys(v) : (v.secrets ?? [v.secret!]).map((s) => Buffer.from(s));
}

/** Compiles a mapping's `verify` (already checked by the loader: config/verify.ts) with its scheme's descriptor. */
export function compileVerifier(d: SenderDescriptor, v: VerifyKeys): Verifier {
  const codec = d.codec(v);
  const keys = keysOf(d, v);
  const tolerance = v.toleranceSeconds ?? d.tolerance;
  const f = failures(d, codec, tolerance);
  const unit = d.milliseconds ? 1000 : 1;
  return (req) => {
    const read = codec.read(req);
    if (read === 'missing') return f.missing;
    if (read === 'malformed' || read.given.length === 0) return f.malformed;
    const messages = codec.messages ? codec.messages(req, read.parts) : [codec.message(req, read.parts)];
    if (!messages.some((m) => matches(codec.algorithm, keys, m, read.given))) return f.wrong;
    const ts = read.parts.seconds ?? read.parts.timestamp;
    if (tolerance === undefined) return undefined;
    if (ts === undefined) return f.noTimestamp;
    return Math.abs(req.now - Number(ts) / unit) <= tolerance ? undefined : f.stale;
  };
}

/** A `sign: true` fixture as its sender sends it, from the verifier's codec, with the first key (an asymmetric scheme's: `signingKey`, the private one). */
export function signRequest(d: SenderDescriptor, v: VerifyKeys, req: VerifyInput, signingKey?: KeyObject): { headers: Record<string, string>; body: Buffer } {
  const codec = d.codec(v);
  const parts = codec.stamp?.(req) ?? {};
  const asymmetric = codec.algorithm === 'ed25519' || codec.algorithm === 'ecdsa-p256-sha256';
  if (asymmetric && signingKey === undefined) throw new Error(`scheme ${d.scheme} verifies with a public key: a fixture is signed with the matching private key`);
  const key = asymmetric ? signingKey! : keysOf(d, v)[0]!;
  const sent = { ...req, body: codec.restamp?.(req, parts) ?? req.body };
  const signature = signWith(codec.algorithm, key, codec.message(sent, parts));
  return { headers: codec.write(signature, parts), body: codec.writeBody?.(sent, signature, parts) ?? sent.body };
}

/** The headers of {@link signRequest}, for a sender whose body carries no part of its signature. */
export function signatureHeaders(d: SenderDescriptor, v: VerifyKeys, req: VerifyInput, signingKey?: KeyObject): Record<string, string> {
  return signRequest(d, v, req, signingKey).headers;
}

function signWith(algorithm: Algorithm, key: Key, message: Buffer[]): Buffer {
  switch (algorithm) {
    case 'equals':
      return key as Buffer;
    case 'ed25519':
      return signAsymmetric(null, Buffer.concat(message), key as KeyObject);
    case 'ecdsa-p256-sha256':
      return signAsymmetric('sha256', Buffer.concat(message), key as KeyObject);
    default: {
      const h = createHmac(algorithm.slice(5), key as Buffer);
      for (const p of message) h.update(p);
      return h.digest();
    }
  }
}

/** Any given signature is valid under any key: every pair checked, without an early exit. */
function matches(algorithm: Algorithm, keys: Key[], message: Buffer[], given: Buffer[]): boolean {
  let ok = false;
  for (const key of keys) {
    if (algorithm === 'ed25519' || algorithm === 'ecdsa-p256-sha256') {
      for (const g of given) ok = verifyAsymmetric(algorithm === 'ed25519' ? null : 'sha256', Buffer.concat(message), key as KeyObject, g) || ok;
      continue;
    }
    // A token is compared as a digest, so that neither its length nor its bytes show in the time taken.
    const expected = algorithm === 'equals' ? sha256(key as Buffer) : signWith(algorithm, key, message);
    for (const g of given) {
      const candidate = algorithm === 'equals' ? sha256(g) : g;
      ok = (candidate.length === expected.length && timingSafeEqual(expected, candidate)) || ok;
    }
  }
  return ok;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

const WITH: Record<Credential, string> = {
  secret: "the mapping's verify.secret (or one of verify.secrets)",
  publicKey: "the private key of the mapping's verify.publicKey",
  basic: "the mapping's verify.username and verify.password",
  handshake: 'the secret it gave in its handshake, kept for the mapping',
};

/** The failures of one scheme, made at compile time; they name the header and its form, never what was sent. */
function failures(d: SenderDescriptor, codec: Codec, tolerance?: number) {
  const { headers, form } = codec;
  const invalid = (message: string): SignatureFailure => ({ code: 'invalid_signature', message });
  const names = headers.length === 1 ? `the ${headers[0]} header is` : `one of the headers ${headers.join(', ')} is`;
  const signature = headers[headers.length - 1];
  const wrong = codec.algorithm === 'equals'
    ? `the ${signature} header does not match: the sender must send ${WITH[d.credential]}`
    : `the ${signature} signature does not match the body: the sender must sign with ${WITH[d.credential]}${d.signsUrl ? ', over the URL it was given (server.publicUrl joined with the path, or verify.url)' : ''}`;
  const own = codec.failureTexts;
  return {
    missing: invalid(own?.missing ?? `${names} missing: the sender must sign its requests`),
    malformed: invalid(own?.malformed ?? `the ${signature} header is not of the form ${form}`),
    wrong: invalid(own?.wrong ?? wrong),
    noTimestamp: invalid(`the signed timestamp (${d.timestamp}) is missing: the sender must sign its requests`),
    stale: {
      code: 'stale_signature',
      message: `the signed timestamp (${d.timestamp}) is more than ${tolerance} s away from this machine's clock: a replayed request is refused this way; check both clocks, or raise verify.toleranceSeconds`,
    } as SignatureFailure,
  };
}
