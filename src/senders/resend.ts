import { standardWebhooksAs } from './standard-webhooks.js';

/** Resend sends through Svix: https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests */
export const resend = standardWebhooksAs('resend', 'Resend', {
  settings: 'Dashboard → Webhooks → Add Webhook: Endpoint URL `https://<your host>{hooks.path}/NAME`, the events; the webhook\'s Signing Secret (`whsec_…`) = `verify.secret`.',
  mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: resend, secret: "${RESEND_WEBHOOK_SECRET}" }\naction: wake\ntextTemplate: "Resend {{type}}: {{data.subject}} to {{data.to.[0]}}"',
});
