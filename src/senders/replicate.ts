import { standardWebhooksAs } from './standard-webhooks.js';

/** Replicate signs webhooks as Standard Webhooks: https://replicate.com/docs/topics/webhooks/verify-webhook */
export const replicate = standardWebhooksAs('replicate', 'Replicate', {
  settings: 'Give `webhook: https://<your host>{hooks.path}/NAME` (and `webhook_events_filter`) when you create a prediction; the secret from GET https://api.replicate.com/v1/webhooks/default/secret (`whsec_…`) = `verify.secret`.',
  mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: replicate, secret: "${REPLICATE_WEBHOOK_SECRET}" }\naction: wake\ntextTemplate: "Replicate prediction {{id}}: {{status}}"',
});
