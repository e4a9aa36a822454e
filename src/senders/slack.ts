import type { SenderDescriptor } from './descriptor.js';
import { SECONDS, header } from './descriptor.js';

const FORM = /^v0=([0-9a-fA-F]{64})$/;

/** Slack: an HMAC-SHA256 of `v0:{timestamp}:{body}`: https://api.slack.com/authentication/verifying-requests-from-slack */
export const slack: SenderDescriptor = {
  scheme: 'slack',
  checks: '`X-Slack-Signature: v0=…`, hex HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{body}`; Slack\'s signed `url_verification` answered with its challenge',
  credential: 'secret',
  tolerance: 300,
  timestamp: 'X-Slack-Request-Timestamp',
  codec: () => ({
    algorithm: 'hmac-sha256',
    headers: ['X-Slack-Request-Timestamp', 'X-Slack-Signature'],
    form: 'v0=<64 hex digits> with a timestamp in seconds',
    read(req) {
      const value = header(req, 'x-slack-signature');
      const ts = header(req, 'x-slack-request-timestamp');
      if (value === undefined || ts === undefined) return 'missing';
      const m = FORM.exec(value);
      return m && SECONDS.test(ts) ? { given: [Buffer.from(m[1]!, 'hex')], parts: { timestamp: ts } } : 'malformed';
    },
    message: (req, parts) => [Buffer.from(`v0:${parts.timestamp}:`), req.body],
    stamp: (req) => ({ timestamp: String(req.now) }),
    write: (signature, parts) => ({ 'x-slack-request-timestamp': parts.timestamp!, 'x-slack-signature': `v0=${signature.toString('hex')}` }),
  }),
  docs: {
    sender: 'Slack (Events API)',
    settings: 'The Slack app → Event Subscriptions: Request URL `https://<your host>{hooks.path}/NAME`; Basic Information → Signing Secret = `verify.secret`; subscribe to the bot events.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: slack, secret: "${SLACK_SIGNING_SECRET}" }\nidempotencyKey: "{{event_id}}"\naction: wake\ntextTemplate: "Slack {{event.type}} in {{event.channel}}: {{event.text}}"',
  },
};
