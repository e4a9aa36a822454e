import { createHash, timingSafeEqual } from 'node:crypto';
import { HookError } from '../errors.js';
import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';
import { failed, type Handshake } from './handshake.js';

const codec = bodyHmac('X-Hook-Signature', 'hmac-sha256', 'hex');
const SECRET = /^[\x21-\x7e]{1,256}$/;
const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `X-Hook-Secret` echoed and kept for the mapping (https://developers.asana.com/reference/createwebhook).
 * So that no stranger swaps in their own, only the first is kept, or one sent with the hooks token.
 */
const handshake: Handshake = {
  method: 'POST',
  check: 'own',
  is: (req) => req.headers['x-hook-secret'] !== undefined,
  async answer(req, ctx) {
    const secret = req.headers['x-hook-secret'];
    if (typeof secret !== 'string' || !SECRET.test(secret)) throw new HookError('invalid_payload', 'X-Hook-Secret must be 1 to 256 printable characters: Asana\'s handshake sends the secret to keep');
    const kept = await ctx.keepSecret(secret, !ctx.bySignature);
    if (!timingSafeEqual(digest(kept), digest(secret))) {
      throw failed(new HookError('unauthorized', `mapping "${ctx.mappingId}" already keeps an X-Hook-Secret: a new handshake replaces it only with the hooks token (add ?token=… to the target URL given to Asana)`), 'hooks');
    }
    return { status: 200, contentType: 'text/plain; charset=utf-8', headers: { 'x-hook-secret': secret } };
  },
};

/** Asana: `X-Hook-Signature`, a hex HMAC-SHA256 of the body with the handshake's secret: https://developers.asana.com/docs/webhooks-guide#security */
export const asana: SenderDescriptor = {
  scheme: 'asana',
  checks: '`X-Hook-Signature`, hex HMAC-SHA256 of the body with the secret Asana sent in its handshake (`X-Hook-Secret`, answered and kept in the store for the mapping)',
  credential: 'handshake',
  codec: () => codec,
  handshake,
  docs: {
    sender: 'Asana',
    settings: 'Create the webhook (POST https://app.asana.com/api/1.0/webhooks) with `target: "https://<your host>{hooks.path}/NAME"`; nothing to paste: Asana\'s handshake gives the secret, kept for the mapping under its `id` (give it one).',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: asana }\nforEach: events\naction: wake\ntextTemplate: "Asana {{action}} {{resource.resource_type}} {{resource.gid}}"',
  },
};
