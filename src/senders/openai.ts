import { standardWebhooksAs } from './standard-webhooks.js';

/** OpenAI signs webhooks as Standard Webhooks: https://platform.openai.com/docs/guides/webhooks#verifying-webhook-signatures */
export const openai = standardWebhooksAs('openai', 'OpenAI', {
  settings: 'Platform settings → Project → Webhooks → Create: Endpoint URL `https://<your host>{hooks.path}/NAME`, the event types; the signing secret (`whsec_…`) shown once = `verify.secret`.',
  mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: openai, secret: "${OPENAI_WEBHOOK_SECRET}" }\naction: wake\ntextTemplate: "OpenAI {{type}}: {{data.id}}"',
});
