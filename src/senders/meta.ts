import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';

const codec = bodyHmac('X-Hub-Signature-256', 'hmac-sha256', 'hex', 'sha256=');

/**
 * Meta (WhatsApp Cloud API, Messenger, Instagram) signs like GitHub, with the app secret, and
 * first sends a verification GET (http/signatures.ts): https://developers.facebook.com/docs/graph-api/webhooks/getting-started
 */
export const meta: SenderDescriptor = {
  scheme: 'meta',
  aliases: ['whatsapp', 'instagram', 'messenger', 'facebook'],
  checks: '`X-Hub-Signature-256: sha256=…`, hex HMAC-SHA256 of the body with the app secret; the verification `GET ?hub.challenge=` answered when `hub.verify_token` equals `verifyToken`',
  credential: 'secret',
  takes: ['verifyToken'],
  needs: { verifyToken: 'the Verify Token you type into Meta\'s webhook settings, which Meta sends back as hub.verify_token in its verification request (GET {hooks.path}/NAME?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…)' },
  codec: () => codec,
  docs: {
    sender: 'Meta (WhatsApp Cloud API, Messenger, Instagram)',
    settings: 'App → WhatsApp → Configuration → Webhook: Callback URL `https://<your host>{hooks.path}/NAME`, Verify Token = `verify.verifyToken`; App settings → Basic → App Secret = `verify.secret`; subscribe to `messages`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: meta, secret: "${META_APP_SECRET}", verifyToken: "${META_VERIFY_TOKEN}" }\naction: wake\ntextTemplate: "WhatsApp {{entry.[0].changes.[0].field}}"',
  },
};
