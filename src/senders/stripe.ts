import type { Codec, SenderDescriptor } from './descriptor.js';
import { HEX, SECONDS, header, items } from './descriptor.js';

const V1 = HEX(32);

/**
 * Stripe: an HMAC-SHA256 of `{t}.{body}`; any `v1` may match (one per active secret while one
 * rolls), `v0` is ignored as Stripe's library does: https://docs.stripe.com/webhooks#verify-manually
 */
export const stripe: SenderDescriptor = {
  scheme: 'stripe',
  checks: '`Stripe-Signature: t=…,v1=…` (any `v1`), hex HMAC-SHA256 of `{t}.{body}`',
  credential: 'secret',
  tolerance: 300,
  timestamp: 'the t= of Stripe-Signature',
  codec: () => tv1Codec('Stripe-Signature'),
  docs: {
    sender: 'Stripe',
    settings: 'Developers → Webhooks → Add endpoint: Endpoint URL `https://<your host>{hooks.path}/NAME`, the events; then reveal the Signing secret (`whsec_…`) = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: stripe, secret: "${STRIPE_WEBHOOK_SECRET}" }\nidempotencyKey: "{{id}}"\naction: wake\ntextTemplate: "Stripe {{type}}: {{data.object.id}}"',
  },
};

/** `{Header}: t=…,v1=…`, a hex HMAC-SHA256 of `{t}.{body}`, any `v1` matching: Stripe's form, which Calendly signs with too. */
export function tv1Codec(name: string): Codec {
  const key = name.toLowerCase();
  return {
    algorithm: 'hmac-sha256',
    headers: [name],
    form: 't=<seconds>,v1=<64 hex digits>',
    read(req) {
      const value = header(req, key);
      if (value === undefined) return 'missing';
      const kv = items(value, ',');
      const t = kv.get('t')?.at(-1);
      const given = (kv.get('v1') ?? []).filter((v) => V1.test(v)).map((v) => Buffer.from(v, 'hex'));
      return t !== undefined && SECONDS.test(t) ? { given, parts: { timestamp: t } } : 'malformed';
    },
    message: (req, parts) => [Buffer.from(`${parts.timestamp}.`), req.body],
    stamp: (req) => ({ timestamp: String(req.now) }),
    write: (signature, parts) => ({ [key]: `t=${parts.timestamp},v1=${signature.toString('hex')}` }),
  };
}
