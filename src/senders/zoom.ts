import { createHmac, timingSafeEqual } from 'node:crypto';
import { HookError } from '../errors.js';
import type { Codec, SenderDescriptor, VerifyKeys } from './descriptor.js';
import { SECONDS, header } from './descriptor.js';
import { json, type Handshake } from './handshake.js';

const FORM = /^v0=([0-9a-fA-F]{64})$/;

const codec: Codec = {
  algorithm: 'hmac-sha256',
  headers: ['x-zm-request-timestamp', 'x-zm-signature'],
  form: 'v0=<64 hex digits> with a timestamp in seconds',
  read(req) {
    const value = header(req, 'x-zm-signature');
    const ts = header(req, 'x-zm-request-timestamp');
    if (value === undefined || ts === undefined) return 'missing';
    const m = FORM.exec(value);
    return m && SECONDS.test(ts) ? { given: [Buffer.from(m[1]!, 'hex')], parts: { timestamp: ts } } : 'malformed';
  },
  message: (req, parts) => [Buffer.from(`v0:${parts.timestamp}:`), req.body],
  stamp: (req) => ({ timestamp: String(req.now) }),
  write: (signature, parts) => ({ 'x-zm-request-timestamp': parts.timestamp!, 'x-zm-signature': `v0=${signature.toString('hex')}` }),
};

/** The secret that signed a request already verified: the validation's answer is made with it (while secrets rotate). */
function signingSecret(req: Parameters<Handshake['answer']>[0], v: VerifyKeys): string {
  const secrets = v.secrets ?? [v.secret!];
  const input = { method: req.method, headers: req.headers, body: req.body, now: 0 };
  const read = codec.read(input);
  if (typeof read === 'string') return secrets[0]!;
  const message = codec.message(input, read.parts);
  const mac = (s: string) => message.reduce((h, part) => h.update(part), createHmac('sha256', s)).digest();
  return secrets.find((s) => timingSafeEqual(mac(s), read.given[0]!)) ?? secrets[0]!;
}

/** `{plainToken, encryptedToken: hex HMAC-SHA256(secret, plainToken)}`: https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint */
const handshake: Handshake = {
  method: 'POST',
  check: 'signature',
  is: (req) => req.json()?.event === 'endpoint.url_validation',
  answer(req, ctx) {
    const plainToken = (req.json()!.payload as Record<string, unknown> | undefined)?.plainToken;
    if (typeof plainToken !== 'string' || plainToken === '') throw new HookError('invalid_payload', 'payload.plainToken is missing: Zoom\'s endpoint.url_validation sends the token to hash');
    return json({ plainToken, encryptedToken: createHmac('sha256', signingSecret(req, ctx.verify)).update(plainToken).digest('hex') });
  },
};

/** Zoom: `x-zm-signature: v0=…`, an HMAC-SHA256 of `v0:{x-zm-request-timestamp}:{body}`: https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events */
export const zoom: SenderDescriptor = {
  scheme: 'zoom',
  checks: '`x-zm-signature: v0=…`, hex HMAC-SHA256 of `v0:{x-zm-request-timestamp}:{body}` with the Secret Token; a signed `endpoint.url_validation` answered `{plainToken, encryptedToken}`',
  credential: 'secret',
  tolerance: 300,
  timestamp: 'x-zm-request-timestamp',
  codec: () => codec,
  handshake,
  docs: {
    sender: 'Zoom',
    settings: 'Zoom App Marketplace → the app → Features → Access: Secret Token = `verify.secret`; Event Subscriptions: Event notification endpoint URL `https://<your host>{hooks.path}/NAME` (Validate), then pick the events.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: zoom, secret: "${ZOOM_WEBHOOK_SECRET_TOKEN}" }\naction: wake\ntextTemplate: "Zoom {{event}}: {{payload.payload.object.topic}}"',
  },
};
