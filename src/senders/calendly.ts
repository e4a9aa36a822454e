import type { SenderDescriptor } from './descriptor.js';
import { tv1Codec } from './stripe.js';

/** Calendly: an HMAC-SHA256 of `{t}.{body}`, 3 minutes of tolerance in its example: https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures */
export const calendly: SenderDescriptor = {
  scheme: 'calendly',
  checks: '`Calendly-Webhook-Signature: t=…,v1=…`, hex HMAC-SHA256 of `{t}.{body}`',
  credential: 'secret',
  tolerance: 180,
  timestamp: 'the t= of Calendly-Webhook-Signature',
  codec: () => tv1Codec('Calendly-Webhook-Signature'),
  docs: {
    sender: 'Calendly',
    settings: 'Create a webhook subscription through Calendly\'s API (POST /webhook_subscriptions) with `url` `https://<your host>{hooks.path}/NAME`, the events, and `signing_key` = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: calendly, secret: "${CALENDLY_SIGNING_KEY}" }\naction: wake\ntextTemplate: "Calendly {{event}}: {{payload.name}} ({{payload.email}})"',
  },
};
