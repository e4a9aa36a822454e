import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { KeyProblem, SenderDescriptor, VerifyKeys } from './descriptor.js';
import { BASE64, SECONDS, header } from './descriptor.js';

const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';
const PEM = /^\s*-----BEGIN PUBLIC KEY-----/;

/**
 * SendGrid's signed Event Webhook: an ECDSA P-256 signature (SHA-256, base64 DER) of the timestamp
 * header followed by the body, checked with the verification key SendGrid shows (base64 DER, or PEM);
 * as @sendgrid/eventwebhook's EventWebhook.verifySignature, which checks no age, so neither does this:
 * https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features
 */
export const sendgrid: SenderDescriptor = {
  scheme: 'sendgrid',
  checks: '`X-Twilio-Email-Event-Webhook-Signature`, base64 ECDSA P-256 (SHA-256) of `X-Twilio-Email-Event-Webhook-Timestamp` followed by the body, with `publicKey` (base64)',
  credential: 'publicKey',
  unsignedToo: true,
  keys: (v) => [publicKey(v.publicKey!)!],
  problems: keyProblems,
  fixtureKey() {
    const { publicKey: key, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { publicKey: key.export({ format: 'der', type: 'spki' }).toString('base64'), privateKey };
  },
  codec: () => ({
    algorithm: 'ecdsa-p256-sha256',
    headers: ['X-Twilio-Email-Event-Webhook-Timestamp', 'X-Twilio-Email-Event-Webhook-Signature'],
    form: '<base64 DER ECDSA signature> with a timestamp in seconds',
    read(req) {
      const value = header(req, SIGNATURE);
      const ts = header(req, TIMESTAMP);
      if (value === undefined || ts === undefined) return 'missing';
      return BASE64.test(value) && SECONDS.test(ts) ? { given: [Buffer.from(value, 'base64')], parts: { timestamp: ts } } : 'malformed';
    },
    message: (req, parts) => [Buffer.from(parts.timestamp!), req.body],
    stamp: (req) => ({ timestamp: String(req.now) }),
    write: (signature, parts) => ({ [TIMESTAMP]: parts.timestamp!, [SIGNATURE]: signature.toString('base64') }),
  }),
  docs: {
    sender: 'SendGrid (Event Webhook)',
    settings: 'Settings → Mail Settings → Event Webhooks → the webhook: Post URL `https://<your host>{hooks.path}/NAME`, the events; turn on Signature Verification and copy the Verification Key = `verify.publicKey`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: sendgrid, publicKey: "${SENDGRID_VERIFICATION_KEY}" }\nforEach: "*"\nidempotencyKey: "sendgrid:{{sg_event_id}}"\naction: wake\ntextTemplate: "SendGrid {{event}} for {{email}}"',
  },
};

/** The verification key, base64 DER (SPKI) as SendGrid shows it or PEM; undefined unless an EC P-256 public key. */
function publicKey(text: string): KeyObject | undefined {
  try {
    const key = PEM.test(text) ? createPublicKey(text) : createPublicKey({ key: Buffer.from(text.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : undefined;
  } catch {
    return undefined;
  }
}

function keyProblems(v: VerifyKeys, at: string): KeyProblem[] {
  if (typeof v.publicKey !== 'string' || publicKey(v.publicKey) !== undefined) return [];
  return [{ path: `${at}.publicKey`, message: 'must be the Verification Key SendGrid shows under Signature Verification: an EC P-256 public key, base64 (or PEM)' }];
}
