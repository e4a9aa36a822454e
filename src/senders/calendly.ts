import type { SenderDescriptor } from './descriptor.js';
import { HEX, SECONDS, header, items } from './descriptor.js';

const V1 = HEX(32);

/** Calendly: an HMAC-SHA256 of `{t}.{body}`, 3 minutes of tolerance in its example: https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures */
export const calendly: SenderDescriptor = {
  scheme: 'calendly',
  checks: '`Calendly-Webhook-Signature: t=…,v1=…`, hex HMAC-SHA256 of `{t}.{body}`',
  credential: 'secret',
  tolerance: 180,
  timestamp: 'the t= of Calendly-Webhook-Signature',
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['Calendly-Webhook-Signature'],
    form: 't=<seconds>,v1=<64 hex digits>',
    read(req) {
      const value = header(req, 'calendly-webhook-signature');
      if (value === undefined) return 'missing';
      const kv = items(value, ',');
      const t = kv.get('t')?.at(-1);
      const given = (kv.get('v1') ?? []).filter((v) => V1.test(v)).map((v) => Buffer.from(v, 'hex'));
      return t !== undefined && SECONDS.test(t) ? { given, parts: { timestamp: t } } : 'malformed';
    },
    message: (req, parts) => [Buffer.from(`${parts.timestamp}.`), req.body],
    stamp: (req) => ({ timestamp: String(req.now) }),
    write: (signature, parts) => ({ 'calendly-webhook-signature': `t=${parts.timestamp},v1=${signature.toString('hex')}` }),
  }),
  docs: {
    sender: 'Calendly',
    settings: 'Create a webhook subscription through Calendly\'s API (POST /webhook_subscriptions) with `url` `https://<your host>{hooks.path}/NAME`, the events, and `signing_key` = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: calendly, secret: "${CALENDLY_SIGNING_KEY}" }\naction: wake\ntextTemplate: "Calendly {{event}}: {{payload.name}} ({{payload.email}})"',
  },
};
