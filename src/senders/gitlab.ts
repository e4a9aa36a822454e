import type { SenderDescriptor } from './descriptor.js';
import { tokenHeader } from './token-header.js';

const codec = tokenHeader('X-Gitlab-Token');

/** GitLab sends the webhook's secret token as it is: https://docs.gitlab.com/user/project/integrations/webhooks/#validate-payloads-by-using-a-secret-token */
export const gitlab: SenderDescriptor = {
  scheme: 'gitlab',
  checks: '`X-Gitlab-Token` equals the secret (constant time)',
  credential: 'secret',
  codec: () => codec,
  docs: {
    sender: 'GitLab',
    settings: 'Project (or group) → Settings → Webhooks → Add new webhook: URL `https://<your host>{hooks.path}/NAME`, Secret token = `verify.secret`; pick the triggers.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: gitlab, secret: "${GITLAB_WEBHOOK_TOKEN}" }\naction: wake\ntextTemplate: "GitLab {{object_kind}} on {{project.path_with_namespace}}"',
  },
};
