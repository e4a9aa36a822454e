import type { SenderDescriptor } from './descriptor.js';
import { header } from './descriptor.js';
import { echo, type Handshake } from './handshake.js';

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
/** Twitch sends nanoseconds, which Date.parse does not take. */
const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$/i;
const ID = 'twitch-eventsub-message-id';
const FIXTURE_MESSAGE_ID = 'fixture-message-id';

/** EventSub's challenge request: its `challenge` as text/plain. https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#responding-to-a-challenge-request */
const handshake: Handshake = {
  method: 'POST',
  check: 'signature',
  is: (req) => req.headers['twitch-eventsub-message-type'] === 'webhook_callback_verification',
  answer: (req) => echo(req.json()?.challenge, 'the body\'s challenge'),
};

/**
 * https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message; older
 * than 10 minutes is refused: https://dev.twitch.tv/docs/eventsub/#guarding-against-replay-attacks
 */
export const twitch: SenderDescriptor = {
  scheme: 'twitch',
  checks: '`Twitch-Eventsub-Message-Signature: sha256=…`, hex HMAC-SHA256 of message id + timestamp + body; the message id is the idempotency key; a signed `webhook_callback_verification` answered with its challenge as text/plain',
  credential: 'secret',
  tolerance: 600,
  timestamp: 'Twitch-Eventsub-Message-Timestamp',
  idHeader: (headers) => (headers[ID] !== undefined ? ID : undefined),
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['Twitch-Eventsub-Message-Id', 'Twitch-Eventsub-Message-Timestamp', 'Twitch-Eventsub-Message-Signature'],
    form: 'sha256=<64 hex digits> with an RFC 3339 timestamp',
    read(req) {
      const id = header(req, ID);
      const ts = header(req, 'twitch-eventsub-message-timestamp');
      const value = header(req, 'twitch-eventsub-message-signature');
      if (id === undefined || ts === undefined || value === undefined) return 'missing';
      const m = SIGNATURE.exec(value);
      const t = RFC3339.exec(ts);
      const ms = t ? Date.parse(`${t[1]}${t[2]}`) : NaN;
      if (!m || Number.isNaN(ms)) return 'malformed';
      return { given: [Buffer.from(m[1]!, 'hex')], parts: { id, timestamp: ts, seconds: Math.floor(ms / 1000) } };
    },
    message: (req, parts) => [Buffer.from(`${parts.id}${parts.timestamp}`), req.body],
    stamp: (req) => ({ id: header(req, ID) ?? FIXTURE_MESSAGE_ID, timestamp: new Date(req.now * 1000).toISOString() }),
    write: (signature, parts) => ({ [ID]: parts.id!, 'twitch-eventsub-message-timestamp': parts.timestamp!, 'twitch-eventsub-message-signature': `sha256=${signature.toString('hex')}` }),
  }),
  handshake,
  docs: {
    sender: 'Twitch (EventSub webhooks)',
    settings: 'Create the subscription (POST https://api.twitch.tv/helix/eventsub/subscriptions) with `transport: {method: webhook, callback: "https://<your host>{hooks.path}/NAME", secret}`, the same secret as `verify.secret` (10 to 100 characters).',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: twitch, secret: "${TWITCH_EVENTSUB_SECRET}" }\naction: wake\ntextTemplate: "Twitch {{subscription.type}}: {{event.broadcaster_user_name}}"',
  },
};
