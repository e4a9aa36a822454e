import type { SenderDescriptor } from './descriptor.js';
import { HEX, SECONDS, header, items } from './descriptor.js';

const H1 = HEX(32);

/**
 * Paddle Billing: an HMAC-SHA256 of `{ts}:{body}`, 5 s of tolerance as Paddle's SDK
 * (@paddle/paddle-node-sdk WebhooksValidator): https://developer.paddle.com/webhooks/signature-verification
 */
export const paddle: SenderDescriptor = {
  scheme: 'paddle',
  checks: '`Paddle-Signature: ts=…;h1=…`, hex HMAC-SHA256 of `{ts}:{body}`',
  credential: 'secret',
  tolerance: 5,
  timestamp: 'the ts= of Paddle-Signature',
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['Paddle-Signature'],
    form: 'ts=<seconds>;h1=<64 hex digits>',
    read(req) {
      const value = header(req, 'paddle-signature');
      if (value === undefined) return 'missing';
      const kv = items(value, ';');
      const ts = kv.get('ts')?.at(-1);
      const given = (kv.get('h1') ?? []).filter((v) => H1.test(v)).map((v) => Buffer.from(v, 'hex'));
      return ts !== undefined && SECONDS.test(ts) ? { given, parts: { timestamp: ts } } : 'malformed';
    },
    message: (req, parts) => [Buffer.from(`${parts.timestamp}:`), req.body],
    stamp: (req) => ({ timestamp: String(req.now) }),
    write: (signature, parts) => ({ 'paddle-signature': `ts=${parts.timestamp};h1=${signature.toString('hex')}` }),
  }),
  docs: {
    sender: 'Paddle (Billing)',
    settings: 'Developer tools → Notifications → New destination: type Webhook, URL `https://<your host>{hooks.path}/NAME`, the events; its secret key = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: paddle, secret: "${PADDLE_WEBHOOK_SECRET}" }\nidempotencyKey: "{{event_id}}"\naction: wake\ntextTemplate: "Paddle {{event_type}}: {{data.id}}"',
  },
};
