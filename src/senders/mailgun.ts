import type { SenderDescriptor, VerifyInput } from './descriptor.js';
import { HEX, SECONDS } from './descriptor.js';
import { readsAsForm } from '../form-body.js';

const SIGNATURE = HEX(32);
/** The token a fixture's signature signs (Mailgun's are random, 50 characters). */
const FIXTURE_TOKEN = 'fixture0token0fixture0token0fixture0token0fixture0';

interface Signature {
  timestamp?: unknown;
  token?: unknown;
  signature?: unknown;
  'parent-signature'?: unknown;
}

/** Read as form fields exactly when the listener reads the payload so (form-body.ts). */
const isForm = (req: VerifyInput) => readsAsForm(typeof req.headers['content-type'] === 'string' ? req.headers['content-type'] : undefined, req.body.toString());

/** The signature fields: a JSON body's `signature` object (webhooks), or a form's own fields (routes and legacy webhooks). */
function fields(req: VerifyInput): Signature | undefined {
  if (isForm(req)) return Object.fromEntries(new URLSearchParams(req.body.toString()));
  try {
    const body = JSON.parse(req.body.toString()) as { signature?: unknown } | null;
    return typeof body?.signature === 'object' && body.signature !== null ? body.signature as Signature : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Mailgun signs inside the body: a hex HMAC-SHA256 of `{timestamp}{token}` with the webhook
 * signing key (a subaccount's event also carries the primary account's `parent-signature`):
 * https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks
 */
export const mailgun: SenderDescriptor = {
  scheme: 'mailgun',
  checks: 'the body\'s `signature.{timestamp, token, signature}` (a form\'s `timestamp`, `token`, `signature` fields), hex HMAC-SHA256 of `{timestamp}{token}`',
  credential: 'secret',
  tolerance: 300,
  timestamp: 'the body\'s signature.timestamp',
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['signature'],
    form: '{timestamp, token, signature} in the body (its signature object, or form fields)',
    read(req) {
      const f = fields(req);
      if (f === undefined || f.signature === undefined) return 'missing';
      const { token } = f;
      const timestamp = typeof f.timestamp === 'number' ? String(f.timestamp) : f.timestamp;
      if (typeof timestamp !== 'string' || !SECONDS.test(timestamp) || typeof token !== 'string' || token === '') return 'malformed';
      const given = [f.signature, f['parent-signature']].filter((s): s is string => typeof s === 'string' && SIGNATURE.test(s)).map((s) => Buffer.from(s, 'hex'));
      return { given, parts: { timestamp, id: token } };
    },
    message: (_req, parts) => [Buffer.from(`${parts.timestamp}${parts.id}`)],
    stamp: (req) => ({ timestamp: String(req.now), id: FIXTURE_TOKEN }),
    write: () => ({}),
    writeBody: (req, signature, parts) => place(req, { timestamp: parts.timestamp!, token: parts.id!, signature: signature.toString('hex') }),
  }),
  docs: {
    sender: 'Mailgun',
    settings: 'Sending → Webhooks → Add webhook: the event type, URL `https://<your host>{hooks.path}/NAME`; Settings → API Security → HTTP webhook signing key = `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: mailgun, secret: "${MAILGUN_WEBHOOK_SIGNING_KEY}" }\nidempotencyKey: "{{event-data.id}}"\naction: wake\ntextTemplate: "Mailgun {{event-data.event}} for {{event-data.recipient}}"',
  },
};

/** The body with its signature fields set, in the body's own form. */
function place(req: VerifyInput, signature: Record<string, string>): Buffer {
  if (isForm(req)) {
    const form = new URLSearchParams(req.body.toString());
    for (const [k, v] of Object.entries(signature)) form.set(k, v);
    return Buffer.from(form.toString());
  }
  let body: unknown;
  try {
    body = JSON.parse(req.body.toString());
  } catch {
    body = undefined;
  }
  const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
  return Buffer.from(JSON.stringify({ ...object, signature }));
}

