import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { SenderDescriptor } from './descriptor.js';
import { HEX, SECONDS, header } from './descriptor.js';
import { json, type Handshake } from './handshake.js';

/** An Ed25519 public key's DER (SubjectPublicKeyInfo) before its 32 raw bytes (RFC 8410 §4). */
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');
const PUBLIC_KEY = HEX(32);
const SIGNATURE = HEX(64);

/** Discord's PING, sent when the Interactions Endpoint URL is saved: answered with PONG. https://discord.com/developers/docs/interactions/receiving-and-responding#receiving-an-interaction */
const handshake: Handshake = {
  method: 'POST',
  check: 'signature',
  is: (req) => req.json()?.type === 1,
  answer: () => json({ type: 1 }),
};

/** As discord-interactions' verifyKey, and a timestamp within 300 s: https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers */
export const discord: SenderDescriptor = {
  scheme: 'discord',
  checks: '`X-Signature-Ed25519`, hex Ed25519 signature of `X-Signature-Timestamp` + body with `publicKey` (hex); a signed PING (`{"type":1}`) answered `{"type":1}`',
  credential: 'publicKey',
  tolerance: 300,
  timestamp: 'X-Signature-Timestamp',
  keys: (v) => [createPublicKey({ key: Buffer.concat([ED25519_SPKI, Buffer.from(v.publicKey!, 'hex')]), format: 'der', type: 'spki' })],
  problems: (v, at) => (typeof v.publicKey === 'string' && !PUBLIC_KEY.test(v.publicKey)
    ? [{ path: `${at}.publicKey`, message: 'must be the application\'s Public Key as Discord shows it: 64 hex digits (Developer Portal → the application → General Information)' }]
    : []),
  fixtureKey() {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    return { publicKey: publicKey.export({ format: 'der', type: 'spki' }).subarray(ED25519_SPKI.length).toString('hex'), privateKey };
  },
  codec: () => ({
    algorithm: 'ed25519',
    headers: ['X-Signature-Timestamp', 'X-Signature-Ed25519'],
    form: '<128 hex digits> with a timestamp in seconds',
    read(req) {
      const value = header(req, 'x-signature-ed25519');
      const ts = header(req, 'x-signature-timestamp');
      if (value === undefined || ts === undefined) return 'missing';
      return SIGNATURE.test(value) && SECONDS.test(ts) ? { given: [Buffer.from(value, 'hex')], parts: { timestamp: ts } } : 'malformed';
    },
    message: (req, parts) => [Buffer.from(parts.timestamp!), req.body],
    stamp: (req) => ({ timestamp: String(req.now) }),
    write: (signature, parts) => ({ 'x-signature-ed25519': signature.toString('hex'), 'x-signature-timestamp': parts.timestamp! }),
  }),
  handshake,
  docs: {
    sender: 'Discord (interactions)',
    settings: 'Developer Portal → the application → General Information: Interactions Endpoint URL `https://<your host>{hooks.path}/NAME`; its Public Key = `verify.publicKey`. Discord checks the URL with a signed PING when you save it.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: discord, publicKey: "${DISCORD_PUBLIC_KEY}" }\naction: agent\nmessageTemplate: "Discord /{{data.name}} from {{member.user.username}}"\nresponse: { status: 200, body: \'{"type":5}\' }',
  },
};
