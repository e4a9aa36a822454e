import type { SenderDescriptor } from './descriptor.js';
import { BASE64, header } from './descriptor.js';

/**
 * Square: `x-square-hmacsha256-signature`, a base64 HMAC-SHA256 of the notification URL followed by
 * the body, with the subscription's signature key; as the `square` SDK's WebhooksHelper.verifySignature:
 * https://developer.squareup.com/docs/webhooks/step3validate
 */
export const square: SenderDescriptor = {
  scheme: 'square',
  checks: '`x-square-hmacsha256-signature`, base64 HMAC-SHA256 of the notification URL followed by the body',
  credential: 'secret',
  signsUrl: true,
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['x-square-hmacsha256-signature'],
    form: '<base64 HMAC-SHA256>',
    read(req) {
      const value = header(req, 'x-square-hmacsha256-signature');
      if (value === undefined) return 'missing';
      const given = BASE64.test(value) ? Buffer.from(value, 'base64') : undefined;
      return given?.length === 32 ? { given: [given], parts: {} } : 'malformed';
    },
    message: (req) => [Buffer.from(req.url!), req.body],
    write: (signature) => ({ 'x-square-hmacsha256-signature': signature.toString('base64') }),
  }),
  docs: {
    sender: 'Square',
    settings: 'Developer Console → the application → Webhooks → Subscriptions → Add subscription: Notification URL `https://<your host>{hooks.path}/NAME` (with `server.publicUrl: https://<your host>`, or that URL as `verify.url`), the events; then the subscription\'s Signature key = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: square, secret: "${SQUARE_SIGNATURE_KEY}" }\nidempotencyKey: "square:{{event_id}}"\naction: wake\ntextTemplate: "Square {{type}}: {{data.type}} {{data.id}}"',
  },
};
