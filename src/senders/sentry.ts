import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';

const codec = bodyHmac('Sentry-Hook-Signature', 'hmac-sha256', 'hex');

/** Sentry integrations: https://docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature */
export const sentry: SenderDescriptor = {
  scheme: 'sentry',
  checks: '`Sentry-Hook-Signature`, hex HMAC-SHA256 of the body',
  credential: 'secret',
  codec: () => codec,
  docs: {
    sender: 'Sentry',
    settings: 'Settings → Developer Settings → Custom Integrations → New Internal Integration: Webhook URL `https://<your host>{hooks.path}/NAME`, Alert Rule Action on, the resources (e.g. Issue); its Client Secret = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: sentry, secret: "${SENTRY_CLIENT_SECRET}" }\naction: wake\ntextTemplate: "Sentry {{headers.sentry-hook-resource}} {{action}}: {{data.issue.title}}"',
  },
};
