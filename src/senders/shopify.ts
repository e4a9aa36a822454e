import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';

const codec = bodyHmac('X-Shopify-Hmac-Sha256', 'hmac-sha256', 'base64');

/** Shopify: https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-2-validate-the-origin-of-your-webhook-to-ensure-its-coming-from-shopify */
export const shopify: SenderDescriptor = {
  scheme: 'shopify',
  checks: '`X-Shopify-Hmac-Sha256`, base64 HMAC-SHA256 of the body',
  credential: 'secret',
  codec: () => codec,
  docs: {
    sender: 'Shopify',
    settings: 'Settings → Notifications → Webhooks → Create webhook: the event, Format JSON, URL `https://<your host>{hooks.path}/NAME`; the key shown under "Your webhooks will be signed with" = `verify.secret` (an app\'s webhooks: the app\'s client secret).',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: shopify, secret: "${SHOPIFY_WEBHOOK_SECRET}" }\nidempotencyKey: "{{headers.x-shopify-webhook-id}}"\naction: wake\ntextTemplate: "Shopify {{headers.x-shopify-topic}}: {{name}}"',
  },
};
