import type { SenderDescriptor } from './descriptor.js';
import { HEX, header, items } from './descriptor.js';

const V1 = HEX(32);

/** PagerDuty V3 webhooks: any `v1=` may match (one per secret while one rolls): https://developer.pagerduty.com/docs/verifying-webhook-signatures */
export const pagerduty: SenderDescriptor = {
  scheme: 'pagerduty',
  checks: '`X-PagerDuty-Signature: v1=…` (any of several), hex HMAC-SHA256 of the body',
  credential: 'secret',
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['X-PagerDuty-Signature'],
    form: 'v1=<64 hex digits>[,v1=…]',
    read(req) {
      const value = header(req, 'x-pagerduty-signature');
      if (value === undefined) return 'missing';
      return { given: (items(value, ',').get('v1') ?? []).filter((v) => V1.test(v)).map((v) => Buffer.from(v, 'hex')), parts: {} };
    },
    message: (req) => [req.body],
    write: (signature) => ({ 'x-pagerduty-signature': `v1=${signature.toString('hex')}` }),
  }),
  docs: {
    sender: 'PagerDuty',
    settings: 'Integrations → Generic Webhooks (v3) → New Webhook: Webhook URL `https://<your host>{hooks.path}/NAME`, the scope and event subscription; the Secret shown once on creation = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: pagerduty, secret: "${PAGERDUTY_WEBHOOK_SECRET}" }\nidempotencyKey: "{{event.id}}"\naction: wake\ntextTemplate: "PagerDuty {{event.event_type}}: {{event.data.title}}"',
  },
};
