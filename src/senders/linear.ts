import type { SenderDescriptor, VerifyInput } from './descriptor.js';
import { header } from './descriptor.js';

const SIGNATURE = /^[0-9a-f]{64}$/;

/** The body's `webhookTimestamp` (milliseconds), when the body is a JSON object with a finite number there. */
function bodyTimestamp(req: VerifyInput): number | undefined {
  try {
    const ts = (JSON.parse(req.body.toString()) as { webhookTimestamp?: unknown } | null)?.webhookTimestamp;
    return typeof ts === 'number' && Number.isFinite(ts) ? ts : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Linear: a hex HMAC-SHA256 of the body, whose own `webhookTimestamp` must be within 60 s, as
 * @linear/sdk's LinearWebhookClient.verify: https://linear.app/developers/webhooks#securing-webhooks
 */
export const linear: SenderDescriptor = {
  scheme: 'linear',
  checks: '`Linear-Signature`, hex HMAC-SHA256 of the body; the body\'s `webhookTimestamp` is the signed timestamp',
  credential: 'secret',
  tolerance: 60,
  timestamp: 'the body\'s webhookTimestamp',
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['Linear-Signature'],
    form: '<64 lower-case hex digits>',
    read(req) {
      const value = header(req, 'linear-signature');
      if (value === undefined) return 'missing';
      if (!SIGNATURE.test(value)) return 'malformed';
      const ms = bodyTimestamp(req);
      return { given: [Buffer.from(value, 'hex')], parts: ms === undefined ? {} : { timestamp: String(ms / 1000) } };
    },
    message: (req) => [req.body],
    stamp: (req) => ({ timestamp: String(req.now) }),
    // A fixture's example payload is signed as Linear sends it now.
    restamp(req, parts) {
      if (bodyTimestamp(req) === undefined) return req.body;
      return Buffer.from(JSON.stringify({ ...JSON.parse(req.body.toString()), webhookTimestamp: Number(parts.timestamp) * 1000 }));
    },
    write: (signature) => ({ 'linear-signature': signature.toString('hex') }),
  }),
  docs: {
    sender: 'Linear',
    settings: 'Settings → API → Webhooks → New webhook: URL `https://<your host>{hooks.path}/NAME`, the data change events; its signing secret = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: linear, secret: "${LINEAR_WEBHOOK_SECRET}" }\nidempotencyKey: "{{headers.linear-delivery}}"\naction: wake\ntextTemplate: "Linear {{type}} {{action}}: {{data.title}}"',
  },
};
