import { standardWebhooksAs } from './standard-webhooks.js';

/** Clerk sends through Svix: https://clerk.com/docs/webhooks/sync-data#verify-the-webhook */
export const clerk = standardWebhooksAs('clerk', 'Clerk', {
  settings: 'Dashboard → Configure → Webhooks → Add Endpoint: Endpoint URL `https://<your host>{hooks.path}/NAME`, the events; the endpoint\'s Signing Secret (`whsec_…`) = `verify.secret`.',
  mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: clerk, secret: "${CLERK_WEBHOOK_SIGNING_SECRET}" }\naction: wake\ntextTemplate: "Clerk {{type}}: {{data.id}}"',
});
