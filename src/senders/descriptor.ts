import type { IncomingHttpHeaders } from 'node:http';
import type { KeyObject } from 'node:crypto';
import { append } from '../append.js';
import type { Handshake } from './handshake.js';

/** The `verify` keys a descriptor reads: config/types.ts VerifyConfig is one (CONTRACT.md §8, §15). */
export interface VerifyKeys {
  scheme: string;
  secret?: string;
  secrets?: string[];
  publicKey?: string;
  url?: string;
  username?: string;
  password?: string;
  verifyToken?: string;
  toleranceSeconds?: number;
  header?: string;
  algorithm?: 'sha256' | 'sha1' | 'sha512';
  encoding?: 'hex' | 'base64';
  prefix?: string;
}

/** One request as its signature sees it (`now` in seconds). */
export interface VerifyInput {
  method: string;
  /** What the sender was given and signs, for URL-signing senders: `verify.url`, else `server.publicUrl` + path + query. */
  url?: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  now: number;
}

/** The parts of the signed message a request carries beside the body. */
export interface Parts {
  timestamp?: string;
  /** The timestamp in seconds, when it is sent in another form (Twitch's RFC 3339). */
  seconds?: number;
  id?: string;
}

export type Read = { given: Buffer[]; parts: Parts } | 'missing' | 'malformed';

/** How the signature is computed; `equals`: the header carries the credential itself; the asymmetric ones verify with `publicKey`. */
export type Algorithm = 'hmac-sha1' | 'hmac-sha256' | 'hmac-sha512' | 'equals' | 'ed25519' | 'ecdsa-p256-sha256';

export type Key = Buffer | KeyObject;

/** Where a scheme's signature is and what it signs: read by the verifier and the fixture signer alike (senders/verify.ts). */
export interface Codec {
  algorithm: Algorithm;
  /** The headers and the signature's form, as failure messages name them (the signature's header last). */
  headers: readonly string[];
  form: string;
  read(req: VerifyInput): Read;
  /** The signed bytes: the one builder of the message, for the verifier and the fixture signer (which writes with `stamp` and `write`). */
  message(req: VerifyInput, parts: Parts): Buffer[];
  /** Every message the sender may have signed, for the verifier, when there are several (Twilio's URL with and without its port); none: no message of this request can match. */
  messages?(req: VerifyInput, parts: Parts): Buffer[][];
  stamp?(req: VerifyInput): Parts;
  /** The body a sender sends at this stamp, when the body carries it (Linear's `webhookTimestamp`). */
  restamp?(req: VerifyInput, parts: Parts): Buffer;
  write(signature: Buffer, parts: Parts): Record<string, string>;
  /** The failure messages, where the credential is not a header (Graph's `clientState` in the body). */
  failureTexts?: Readonly<Record<'missing' | 'malformed' | 'wrong', string>>;
  /** The body with the signature in it, for a sender that signs inside the body (Mailgun). */
  writeBody?(req: VerifyInput, signature: Buffer, parts: Parts): Buffer;
}

/** A config problem of a `verify` (config/errors.ts ConfigProblem). */
export interface KeyProblem {
  path: string;
  message: string;
}

/** What the generated docs table says of a sender (docs/senders.md). */
export interface SenderDocs {
  /** The sender's name; what to paste where in its settings; a mapping to start from (YAML, NAME for the hook's name). */
  sender: string;
  settings: string;
  mapping: string;
}

/**
 * The credential a scheme checks with: `secret`/`secrets`, `publicKey`, or `username` + `password`
 * (CONTRACT.md §15); `handshake`: a secret the sender gives in its handshake, kept in the store (Asana).
 */
export type Credential = 'secret' | 'publicKey' | 'basic' | 'handshake';

/** One sender's scheme (CONTRACT.md §15): where its signature is, what is signed, its keys and its docs. */
export interface SenderDescriptor {
  scheme: string;
  /** Other words for the sender in a hook's name or id (`hookrelay check` suggests the scheme). */
  aliases?: readonly string[];
  docs: SenderDocs;
  /** Where the signature is, its algorithm and encoding, what is signed (the docs). */
  checks: string;
  credential: Credential;
  /** The `verify` keys it takes beyond its credential, toleranceSeconds and url; and those it needs, with what to give. */
  takes?: readonly string[];
  needs?: Readonly<Record<string, string>>;
  /** Signs the URL it was sent to: takes `verify.url`, and needs it or `server.publicUrl`. */
  signsUrl?: boolean;
  /** Signs a timestamp: the tolerance without `verify.toleranceSeconds` (seconds), and the timestamp as the stale message names it. */
  tolerance?: number;
  timestamp?: string;
  /** The signed timestamp counts milliseconds, not seconds (HubSpot). */
  milliseconds?: boolean;
  /** The signed id's header, the idempotency key: no unsigned key header replaces it (CONTRACT.md §8). */
  idHeader?(headers: IncomingHttpHeaders): string | undefined;
  /** The keys a request is checked with (default: each secret's UTF-8 bytes). */
  keys?(v: VerifyKeys): Key[];
  codec(v: VerifyKeys): Codec;
  /** The sender posts unsigned webhooks under the same name too (SendGrid's Inbound Parse): `check` does not warn about one without `verify`. */
  unsignedToo?: boolean;
  /** An asymmetric scheme's fresh key pair for `sign: true` fixtures: the private key signs, and `publicKey`, written as `verify.publicKey` takes it, verifies in place of the mapping's. */
  fixtureKey?(): { publicKey: string; privateKey: KeyObject };
  /** Load checks the shape of the keys cannot say (e.g. a secret's encoding); never quotes a secret. */
  problems?(v: VerifyKeys, at: string): KeyProblem[];
  /** What the sender sends before anything else, answered with no action (http/handshakes.ts). */
  handshake?: Handshake;
}

export const HEX = (bytes: number) => new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`);
export const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
export const SECONDS = /^\d{1,15}$/;

/** A header's one value (a repeated header is no signature). */
export function header(req: VerifyInput, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/** `k=v` items of a header (Stripe's `t=…,v1=…`, Paddle's `ts=…;h1=…`): every value of each key, in order. */
export function items(value: string, separator: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const item of value.split(separator)) {
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const k = item.slice(0, eq).trim();
    append(out, k, item.slice(eq + 1).trim());
  }
  return out;
}
