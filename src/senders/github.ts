import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';

const codec = bodyHmac('X-Hub-Signature-256', 'hmac-sha256', 'hex', 'sha256=');

/** GitHub: https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries */
export const github: SenderDescriptor = {
  scheme: 'github',
  checks: '`X-Hub-Signature-256: sha256=…`, hex HMAC-SHA256 of the body',
  credential: 'secret',
  codec: () => codec,
  docs: {
    sender: 'GitHub',
    settings: 'Repository (or organisation) → Settings → Webhooks → Add webhook: Payload URL `https://<your host>{hooks.path}/NAME`, Content type `application/json`, Secret = `verify.secret`; pick the events.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: github, secret: "${GITHUB_WEBHOOK_SECRET}" }\naction: wake\ntextTemplate: "GitHub {{headers.x-github-event}} on {{repository.full_name}}"',
  },
};
