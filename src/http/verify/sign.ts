import type { VerifyConfig } from '../../config/types.js';
import { standardWebhooksKey } from '../../config/verify.js';
import { hmac } from './schemes.js';

/** The message id a fixture's Standard Webhooks signature signs when the fixture names none. */
const FIXTURE_MESSAGE_ID = 'msg_fixture';

/**
 * The headers a sender would sign `body` with under a mapping's `verify` (the inverse of
 * schemes.ts), for a `sign: true` fixture: the first secret, `now` in seconds, lower-case names.
 */
export function signatureHeaders(v: VerifyConfig, headers: Readonly<Record<string, string>>, body: Buffer, now: number): Record<string, string> {
  const secret = (v.secrets ?? [v.secret!])[0]!;
  const ts = String(now);
  switch (v.scheme) {
    case 'github':
    case 'meta':
      // https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries;
      // Meta signs the same header the same way with the app secret.
      return { 'x-hub-signature-256': `sha256=${hmac('sha256', secret, body).toString('hex')}` };
    case 'hmac':
      return { [v.header!.toLowerCase()]: `${v.prefix ?? ''}${hmac(v.algorithm ?? 'sha256', secret, body).toString(v.encoding ?? 'hex')}` };
    case 'slack':
      // https://api.slack.com/authentication/verifying-requests-from-slack
      return { 'x-slack-request-timestamp': ts, 'x-slack-signature': `v0=${hmac('sha256', secret, Buffer.from(`v0:${ts}:`), body).toString('hex')}` };
    case 'stripe':
      // https://docs.stripe.com/webhooks#verify-manually
      return { 'stripe-signature': `t=${ts},v1=${hmac('sha256', secret, Buffer.from(`${ts}.`), body).toString('hex')}` };
    case 'standard-webhooks': {
      // https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
      const id = headers['webhook-id'] ?? headers['svix-id'] ?? FIXTURE_MESSAGE_ID;
      const sig = hmac('sha256', standardWebhooksKey(secret)!, Buffer.from(`${id}.${ts}.`), body).toString('base64');
      return { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` };
    }
  }
}
