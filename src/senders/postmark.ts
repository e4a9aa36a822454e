import type { SenderDescriptor } from './descriptor.js';
import { header } from './descriptor.js';

const BASIC = /^Basic ([A-Za-z0-9+/]+={0,2})$/i;

/**
 * Postmark signs nothing: its webhooks carry Basic auth credentials put in the webhook URL
 * (`https://user:pass@host/…`): https://postmarkapp.com/developer/webhooks/webhooks-overview#protecting-your-webhook
 */
export const postmark: SenderDescriptor = {
  scheme: 'postmark',
  checks: '`Authorization: Basic …` equals `username`:`password` (constant time)',
  credential: 'basic',
  keys: (v) => [Buffer.from(`${v.username}:${v.password}`)],
  codec: () => ({
    algorithm: 'equals',
    headers: ['Authorization'],
    form: 'Basic <base64 of username:password>',
    read(req) {
      const value = header(req, 'authorization');
      if (value === undefined) return 'missing';
      const m = BASIC.exec(value);
      return m ? { given: [Buffer.from(m[1]!, 'base64')], parts: {} } : 'malformed';
    },
    message: () => [],
    write: (credentials) => ({ authorization: `Basic ${credentials.toString('base64')}` }),
  }),
  docs: {
    sender: 'Postmark',
    settings: 'Servers → the server → Settings → Webhooks → Add webhook: Webhook URL `https://<your host>{hooks.path}/NAME`, and under Basic auth credentials the `verify.username` and `verify.password`; pick the events.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: postmark, username: postmark, password: "${POSTMARK_WEBHOOK_PASSWORD}" }\naction: wake\ntextTemplate: "Postmark {{RecordType}} for {{Recipient}}"',
  },
};
