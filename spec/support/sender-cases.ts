import { createHmac } from 'node:crypto';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { Paddle } from '@paddle/paddle-node-sdk';
import OpenAI from 'openai';
import { Webhook as Svix } from 'svix';
import { Webhook as StandardWebhook } from 'standardwebhooks';

/** A request as a sender sends it. */
export interface Sent {
  headers: Record<string, string>;
  body: string;
}

/**
 * One sender of the catalog (CONTRACT.md §15): its `verify`, an example body, and how the sender
 * itself signs (its official library, else its published example, cited); `accepts` asks the
 * sender's library whether a request our fixture signer made is one it would send.
 */
export interface SenderCase {
  scheme: string;
  verify: Record<string, unknown>;
  /** The same verify with another credential. */
  wrong: Record<string, unknown>;
  body: string;
  contentType?: string;
  sign(verify: Record<string, unknown>, body: string, at: number): Sent;
  /** Changes what the signature covers; absent where it covers nothing of the request (a token). */
  tamper?(sent: Sent): Sent;
  /** Signs a timestamp with this tolerance (seconds). */
  tolerance?: number;
  accepts?(sent: Sent, verify: Record<string, unknown>): boolean | Promise<boolean>;
}

const hmac = (secret: unknown, data: string, enc: 'hex' | 'base64') => createHmac('sha256', String(secret)).update(data).digest(enc);
const json = (headers: Record<string, string>, body: string): Sent => ({ headers: { 'content-type': 'application/json', ...headers }, body });
const changeBody = (s: Sent): Sent => ({ ...s, body: s.body.replace('"spec"', '"SPEC"') });
const whsec = (text: string) => `whsec_${Buffer.from(text).toString('base64')}`;
const BODY = JSON.stringify({ id: 'evt_1', type: 'spec', note: 'Grüße ✓' });

/** A Standard Webhooks sender under its own name, signed by `svix` (its `svix-*` headers) or `standardwebhooks`. */
function standard(scheme: string, by: 'svix' | 'standardwebhooks', accepts?: SenderCase['accepts']): SenderCase {
  return {
    scheme,
    verify: { scheme, secret: whsec(`${scheme} signing key`) },
    wrong: { scheme, secret: whsec('another key') },
    body: BODY,
    tolerance: 300,
    sign(v, body, at) {
      const id = `msg_${scheme}_${at}`;
      if (by === 'svix') {
        const signature = new Svix(String(v.secret)).sign(id, new Date(at * 1000), body);
        return json({ 'svix-id': id, 'svix-timestamp': String(at), 'svix-signature': signature }, body);
      }
      const signature = new StandardWebhook(String(v.secret)).sign(id, new Date(at * 1000), body);
      return json({ 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': signature }, body);
    },
    tamper: changeBody,
    accepts: accepts ?? ((s, v) => {
      try {
        new Svix(String(v.secret)).verify(s.body, s.headers);
        return true;
      } catch {
        return false;
      }
    }),
  };
}

export const SENDER_CASES: SenderCase[] = [
  {
    // https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-2-validate-the-origin-of-your-webhook-to-ensure-its-coming-from-shopify
    scheme: 'shopify',
    verify: { scheme: 'shopify', secret: 'shpss_spec' },
    wrong: { scheme: 'shopify', secret: 'shpss_other' },
    body: BODY,
    sign: (v, body) => json({ 'x-shopify-hmac-sha256': hmac(v.secret, body, 'base64'), 'x-shopify-topic': 'orders/create' }, body),
    tamper: changeBody,
  },
  {
    // @linear/sdk has no signer: https://linear.app/developers/webhooks#securing-webhooks; LinearWebhookClient checks it.
    scheme: 'linear',
    verify: { scheme: 'linear', secret: 'lin_wh_spec' },
    wrong: { scheme: 'linear', secret: 'lin_wh_other' },
    body: JSON.stringify({ action: 'create', type: 'Issue', data: { title: 'spec' }, webhookTimestamp: 0 }),
    tolerance: 60,
    sign(v, body, at) {
      const sent = JSON.stringify({ ...JSON.parse(body), webhookTimestamp: at * 1000 });
      return json({ 'linear-signature': hmac(v.secret, sent, 'hex') }, sent);
    },
    tamper: changeBody,
    accepts(s, v) {
      try {
        return new LinearWebhookClient(String(v.secret)).verify(Buffer.from(s.body), s.headers['linear-signature']!);
      } catch {
        return false;
      }
    },
  },
  {
    // https://developer.paddle.com/webhooks/signature-verification; the SDK's Webhooks checks it.
    scheme: 'paddle',
    verify: { scheme: 'paddle', secret: 'pdl_ntfset_spec' },
    wrong: { scheme: 'paddle', secret: 'pdl_ntfset_other' },
    body: JSON.stringify({ event_id: 'evt_01', event_type: 'transaction.completed', data: { id: 'spec' } }),
    tolerance: 5,
    sign: (v, body, at) => json({ 'paddle-signature': `ts=${at};h1=${hmac(v.secret, `${at}:${body}`, 'hex')}` }, body),
    tamper: changeBody,
    accepts: (s, v) => new Paddle('pdl_sdbx_apikey_spec').webhooks.isSignatureValid(s.body, String(v.secret), s.headers['paddle-signature']!),
  },
  {
    // https://docs.gitlab.com/user/project/integrations/webhooks/#validate-payloads-by-using-a-secret-token
    scheme: 'gitlab',
    verify: { scheme: 'gitlab', secret: 'glpat-like-spec-token' },
    wrong: { scheme: 'gitlab', secret: 'another-token' },
    body: JSON.stringify({ object_kind: 'push', project: { path_with_namespace: 'spec/x' } }),
    sign: (v, body) => json({ 'x-gitlab-token': String(v.secret), 'x-gitlab-event': 'Push Hook' }, body),
  },
  {
    // https://core.telegram.org/bots/api#setwebhook (secret_token)
    scheme: 'telegram',
    verify: { scheme: 'telegram', secret: 'spec_secret-Token_1' },
    wrong: { scheme: 'telegram', secret: 'another_token' },
    body: JSON.stringify({ update_id: 1, message: { text: 'spec', from: { username: 'ada' } } }),
    sign: (v, body) => json({ 'x-telegram-bot-api-secret-token': String(v.secret) }, body),
  },
  {
    // https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures
    scheme: 'calendly',
    verify: { scheme: 'calendly', secret: 'calendly-signing-key' },
    wrong: { scheme: 'calendly', secret: 'another-key' },
    body: BODY,
    tolerance: 180,
    sign: (v, body, at) => json({ 'calendly-webhook-signature': `t=${at},v1=${hmac(v.secret, `${at}.${body}`, 'hex')}` }, body),
    tamper: changeBody,
  },
  {
    // https://developer.pagerduty.com/docs/verifying-webhook-signatures: one v1= per secret while one rolls.
    scheme: 'pagerduty',
    verify: { scheme: 'pagerduty', secret: 'pd-spec-secret' },
    wrong: { scheme: 'pagerduty', secret: 'pd-other' },
    body: BODY,
    sign: (v, body) => json({ 'x-pagerduty-signature': `v1=${hmac('pd-retired', body, 'hex')},v1=${hmac(v.secret, body, 'hex')}` }, body),
    tamper: changeBody,
  },
  {
    // https://docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature
    scheme: 'sentry',
    verify: { scheme: 'sentry', secret: 'sentry-client-secret' },
    wrong: { scheme: 'sentry', secret: 'another-secret' },
    body: BODY,
    sign: (v, body) => json({ 'sentry-hook-signature': hmac(v.secret, body, 'hex'), 'sentry-hook-resource': 'issue' }, body),
    tamper: changeBody,
  },
  {
    // https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks: the signature covers timestamp and token only.
    scheme: 'mailgun',
    verify: { scheme: 'mailgun', secret: 'key-mailgun-spec' },
    wrong: { scheme: 'mailgun', secret: 'key-other' },
    body: JSON.stringify({ 'event-data': { event: 'delivered', recipient: 'ada@example.com' } }),
    tolerance: 300,
    sign(v, body, at) {
      const token = 'a'.repeat(50);
      const signature = { timestamp: String(at), token, signature: hmac(v.secret, `${at}${token}`, 'hex') };
      return json({}, JSON.stringify({ signature, ...JSON.parse(body) }));
    },
    tamper: (s) => ({ ...s, body: s.body.replace('"aaaa', '"baaa') }),
  },
  {
    // https://postmarkapp.com/developer/webhooks/webhooks-overview#protecting-your-webhook (Basic auth, RFC 7617)
    scheme: 'postmark',
    verify: { scheme: 'postmark', username: 'postmark', password: 'pm-spec-password' },
    wrong: { scheme: 'postmark', username: 'postmark', password: 'another' },
    body: JSON.stringify({ RecordType: 'Delivery', Recipient: 'ada@example.com' }),
    sign: (v, body) => json({ authorization: `Basic ${Buffer.from(`${v.username}:${v.password}`).toString('base64')}` }, body),
  },
  standard('clerk', 'svix'),
  standard('resend', 'svix'),
  standard('openai', 'standardwebhooks', async (s, v) => {
    try {
      await new OpenAI({ apiKey: 'sk-spec' }).webhooks.verifySignature(s.body, s.headers, String(v.secret));
      return true;
    } catch {
      return false;
    }
  }),
  standard('replicate', 'standardwebhooks'),
];
