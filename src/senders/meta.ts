import { createHash, timingSafeEqual } from 'node:crypto';
import { HookError } from '../errors.js';
import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';
import { echo, failed, type Handshake } from './handshake.js';

const codec = bodyHmac('X-Hub-Signature-256', 'hmac-sha256', 'hex', 'sha256=');
const digest = (s: string) => createHash('sha256').update(s).digest();

/** `GET ?hub.mode=subscribe&hub.verify_token=V&hub.challenge=C` → C when V is verifyToken (CONTRACT.md §8): https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests */
const handshake: Handshake = {
  method: 'GET',
  check: 'own',
  passes: 'verifyToken',
  is: () => true,
  answer(req, ctx) {
    const q = req.query;
    if (q.get('hub.mode') !== 'subscribe') {
      throw new HookError('invalid_payload', 'hub.mode must be subscribe: this GET answers Meta\'s verification request, GET {hooks.path}/NAME?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…');
    }
    const challenge = q.get('hub.challenge');
    if (challenge === null || challenge === '') throw new HookError('invalid_payload', 'hub.challenge is missing: Meta\'s verification request sends the challenge to echo');
    if (!timingSafeEqual(digest(q.get('hub.verify_token') ?? ''), digest(ctx.verify.verifyToken ?? ''))) {
      throw failed(new HookError('forbidden', 'hub.verify_token does not match the mapping\'s verify.verifyToken: type the same Verify Token into Meta\'s webhook settings'), 'verifyToken');
    }
    return echo(challenge, 'hub.challenge');
  },
};

/**
 * Meta (WhatsApp Cloud API, Messenger, Instagram) signs like GitHub, with the app secret, and
 * first sends a verification GET: https://developers.facebook.com/docs/graph-api/webhooks/getting-started
 */
export const meta: SenderDescriptor = {
  scheme: 'meta',
  aliases: ['whatsapp', 'instagram', 'messenger', 'facebook'],
  checks: '`X-Hub-Signature-256: sha256=…`, hex HMAC-SHA256 of the body with the app secret; the verification `GET ?hub.challenge=` answered when `hub.verify_token` equals `verifyToken`',
  credential: 'secret',
  takes: ['verifyToken'],
  needs: { verifyToken: 'the Verify Token you type into Meta\'s webhook settings, which Meta sends back as hub.verify_token in its verification request (GET {hooks.path}/NAME?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…)' },
  codec: () => codec,
  handshake,
  docs: {
    sender: 'Meta (WhatsApp Cloud API, Messenger, Instagram)',
    settings: 'App → WhatsApp → Configuration → Webhook: Callback URL `https://<your host>{hooks.path}/NAME`, Verify Token = `verify.verifyToken`; App settings → Basic → App Secret = `verify.secret`; subscribe to `messages`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: meta, secret: "${META_APP_SECRET}", verifyToken: "${META_VERIFY_TOKEN}" }\naction: wake\ntextTemplate: "WhatsApp {{entry.[0].changes.[0].field}}"',
  },
};
