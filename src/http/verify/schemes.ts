import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { VerifyConfig } from '../../config/types.js';
import { standardWebhooksKey } from '../../config/verify.js';

/** Why a request's signature was refused: the error code and a message that names no secret or signature. */
export interface SignatureFailure {
  code: 'invalid_signature' | 'stale_signature';
  message: string;
}

/** One mapping's compiled `verify`: undefined when the raw body carries a valid signature, else why not (`now` in seconds). */
export type Verifier = (headers: IncomingHttpHeaders, body: Buffer, now: number) => SignatureFailure | undefined;

/** The tolerance of the timestamped schemes when `toleranceSeconds` is not given. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

type Algorithm = 'sha256' | 'sha1' | 'sha512';
const DIGEST_BYTES: Record<Algorithm, number> = { sha1: 20, sha256: 32, sha512: 64 };
const HEX = (bytes: number) => new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const SECONDS = /^\d{1,15}$/;

/** The id header a Standard Webhooks signature covers, the idempotency key (CONTRACT.md §8): `webhook-id`, else Svix's `svix-id`. */
export function standardWebhooksIdHeader(headers: IncomingHttpHeaders): 'webhook-id' | 'svix-id' | undefined {
  if (headers['webhook-id'] !== undefined) return 'webhook-id';
  return headers['svix-id'] !== undefined ? 'svix-id' : undefined;
}

/** Compiles a mapping's `verify` (already checked by the loader: config/verify.ts). */
export function compileVerifier(v: VerifyConfig): Verifier {
  const secrets = v.secrets ?? [v.secret!];
  const tolerance = v.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  switch (v.scheme) {
    // https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries; Meta signs the same
    // header the same way: https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads
    case 'github':
    case 'meta':
      return hmacHeader('X-Hub-Signature-256', 'sha256', 'hex', 'sha256=', secrets);
    case 'hmac':
      return hmacHeader(v.header!, v.algorithm ?? 'sha256', v.encoding ?? 'hex', v.prefix ?? '', secrets);
    case 'slack':
      return slack(secrets, tolerance);
    case 'stripe':
      return stripe(secrets, tolerance);
    case 'standard-webhooks':
      return standardWebhooks(secrets.map((s) => standardWebhooksKey(s)!), tolerance);
  }
}

/** An HMAC of the body alone, in one header: `{prefix}{digest}` (github, hmac). */
function hmacHeader(name: string, algorithm: Algorithm, encoding: 'hex' | 'base64', prefix: string, secrets: string[]): Verifier {
  const key = name.toLowerCase();
  const bytes = DIGEST_BYTES[algorithm];
  const form = encoding === 'hex' ? HEX(bytes) : BASE64;
  const f = failures([name], `${prefix}<${encoding === 'hex' ? `${bytes * 2} hex digits` : 'base64 digest'}>`);
  return (headers, body) => {
    const value = headers[key];
    if (typeof value !== 'string') return f.missing;
    if (!value.startsWith(prefix) || !form.test(value.slice(prefix.length))) return f.malformed;
    const given = Buffer.from(value.slice(prefix.length), encoding);
    if (given.length !== bytes) return f.malformed;
    return matchesAny(secrets.map((s) => hmac(algorithm, s, body)), [given]) ? undefined : f.wrong;
  };
}

/** Slack: an HMAC-SHA256 of `v0:{timestamp}:{body}`: https://api.slack.com/authentication/verifying-requests-from-slack */
function slack(secrets: string[], tolerance: number): Verifier {
  const f = failures(['X-Slack-Request-Timestamp', 'X-Slack-Signature'], 'v0=<64 hex digits> with a timestamp in seconds', 'X-Slack-Request-Timestamp', tolerance);
  const form = /^v0=([0-9a-fA-F]{64})$/;
  return (headers, body, now) => {
    const value = headers['x-slack-signature'];
    const ts = headers['x-slack-request-timestamp'];
    if (typeof value !== 'string' || typeof ts !== 'string') return f.missing;
    const m = form.exec(value);
    if (!m || !SECONDS.test(ts)) return f.malformed;
    const base = Buffer.from(`v0:${ts}:`);
    const ok = matchesAny(secrets.map((s) => hmac('sha256', s, base, body)), [Buffer.from(m[1], 'hex')]);
    if (!ok) return f.wrong;
    return Math.abs(now - Number(ts)) > tolerance ? f.stale : undefined;
  };
}

/**
 * Stripe: an HMAC-SHA256 of `{t}.{body}`; any `v1` may match (one per active secret while one
 * rolls), `v0` is ignored as Stripe's library does: https://docs.stripe.com/webhooks#verify-manually
 */
function stripe(secrets: string[], tolerance: number): Verifier {
  const f = failures(['Stripe-Signature'], 't=<seconds>,v1=<64 hex digits>', 'the t= of Stripe-Signature', tolerance);
  const v1 = HEX(32);
  return (headers, body, now) => {
    const value = headers['stripe-signature'];
    if (typeof value !== 'string') return f.missing;
    let t: string | undefined;
    const given: Buffer[] = [];
    for (const item of value.split(',')) {
      const eq = item.indexOf('=');
      const k = item.slice(0, eq).trim();
      const v = item.slice(eq + 1).trim();
      if (k === 't') t = v;
      else if (k === 'v1' && v1.test(v)) given.push(Buffer.from(v, 'hex'));
    }
    if (t === undefined || !SECONDS.test(t) || given.length === 0) return f.malformed;
    const base = Buffer.from(`${t}.`);
    if (!matchesAny(secrets.map((s) => hmac('sha256', s, base, body)), given)) return f.wrong;
    return Math.abs(now - Number(t)) > tolerance ? f.stale : undefined;
  };
}

/**
 * Standard Webhooks (and Svix's `svix-*` names): an HMAC-SHA256 of `{id}.{timestamp}.{body}`, other
 * versions ignored: https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
function standardWebhooks(keys: Buffer[], tolerance: number): Verifier {
  const f = failures(['webhook-id', 'webhook-timestamp', 'webhook-signature'], 'v1,<base64> (space-separated) with a timestamp in seconds', 'webhook-timestamp', tolerance);
  return (headers, body, now) => {
    const idHeader = standardWebhooksIdHeader(headers);
    const id = idHeader && headers[idHeader];
    const ts = headers['webhook-timestamp'] ?? headers['svix-timestamp'];
    const value = headers['webhook-signature'] ?? headers['svix-signature'];
    if (typeof id !== 'string' || typeof ts !== 'string' || typeof value !== 'string') return f.missing;
    if (!SECONDS.test(ts)) return f.malformed;
    const given: Buffer[] = [];
    for (const item of value.split(' ')) {
      if (!item.startsWith('v1,')) continue;
      const b64 = item.slice(3);
      const sig = BASE64.test(b64) ? Buffer.from(b64, 'base64') : undefined;
      if (sig?.length === 32) given.push(sig);
    }
    if (given.length === 0) return f.malformed;
    const base = Buffer.from(`${id}.${ts}.`);
    if (!matchesAny(keys.map((k) => hmac('sha256', k, base, body)), given)) return f.wrong;
    return Math.abs(now - Number(ts)) > tolerance ? f.stale : undefined;
  };
}

/** The message id a fixture's Standard Webhooks signature signs when the fixture names none. */
const FIXTURE_MESSAGE_ID = 'msg_fixture';

/**
 * The headers a sender would sign `body` with under a mapping's `verify` (the inverse of the
 * verifiers above), for a `sign: true` fixture: the first secret, `now` in seconds, lower-case names.
 */
export function signatureHeaders(v: VerifyConfig, headers: Readonly<Record<string, string>>, body: Buffer, now: number): Record<string, string> {
  const secret = (v.secrets ?? [v.secret!])[0]!;
  const ts = String(now);
  switch (v.scheme) {
    case 'github':
    case 'meta':
      return { 'x-hub-signature-256': `sha256=${hmac('sha256', secret, body).toString('hex')}` };
    case 'hmac':
      return { [v.header!.toLowerCase()]: `${v.prefix ?? ''}${hmac(v.algorithm ?? 'sha256', secret, body).toString(v.encoding ?? 'hex')}` };
    case 'slack':
      return { 'x-slack-request-timestamp': ts, 'x-slack-signature': `v0=${hmac('sha256', secret, Buffer.from(`v0:${ts}:`), body).toString('hex')}` };
    case 'stripe':
      return { 'stripe-signature': `t=${ts},v1=${hmac('sha256', secret, Buffer.from(`${ts}.`), body).toString('hex')}` };
    case 'standard-webhooks': {
      const id = headers['webhook-id'] ?? headers['svix-id'] ?? FIXTURE_MESSAGE_ID;
      const sig = hmac('sha256', standardWebhooksKey(secret)!, Buffer.from(`${id}.${ts}.`), body).toString('base64');
      return { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` };
    }
  }
}

function hmac(algorithm: Algorithm, key: string | Buffer, ...parts: Buffer[]): Buffer {
  const h = createHmac(algorithm, key);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Any given signature equals any expected digest: every pair compared in constant time, without an early exit. */
function matchesAny(expected: Buffer[], given: Buffer[]): boolean {
  let ok = false;
  for (const e of expected) for (const g of given) ok = timingSafeEqual(e, g) || ok;
  return ok;
}

/** The failures of one scheme, made at compile time; they name the header and its form, never what was sent. */
function failures(headers: string[], form: string, timestamp?: string, tolerance?: number) {
  const invalid = (message: string): SignatureFailure => ({ code: 'invalid_signature', message });
  const names = headers.length === 1 ? `the ${headers[0]} header is` : `one of the headers ${headers.join(', ')} is`;
  const signature = headers[headers.length - 1];
  return {
    missing: invalid(`${names} missing: the sender must sign its requests`),
    malformed: invalid(`the ${signature} header is not of the form ${form}`),
    wrong: invalid(`the ${signature} signature does not match the body: the sender must sign with the mapping's verify.secret (or one of verify.secrets)`),
    stale: {
      code: 'stale_signature',
      message: `the signed timestamp (${timestamp}) is more than ${tolerance} s away from this machine's clock: a replayed request is refused this way; check both clocks, or raise verify.toleranceSeconds`,
    } as SignatureFailure,
  };
}
