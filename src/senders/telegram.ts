import type { SenderDescriptor } from './descriptor.js';
import { tokenHeader } from './token-header.js';

const codec = tokenHeader('X-Telegram-Bot-Api-Secret-Token');
// Telegram takes only these as a secret_token: https://core.telegram.org/bots/api#setwebhook
const SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

/** Telegram sends setWebhook's secret_token as it is: https://core.telegram.org/bots/api#setwebhook */
export const telegram: SenderDescriptor = {
  scheme: 'telegram',
  checks: '`X-Telegram-Bot-Api-Secret-Token` equals the secret (constant time)',
  credential: 'secret',
  codec: () => codec,
  problems: (v, at) => [...(v.secret !== undefined ? [['secret', v.secret]] : []), ...(v.secrets ?? []).map((s, i) => [`secrets[${i}]`, s])]
    .filter(([, s]) => typeof s === 'string' && !SECRET_TOKEN.test(s))
    .map(([key]) => ({ path: `${at}.${key}`, message: 'must be 1 to 256 characters of A-Z, a-z, 0-9, _ and -: Telegram refuses any other secret_token' })),
  docs: {
    sender: 'Telegram (bot updates)',
    settings: 'Call `https://api.telegram.org/bot<token>/setWebhook` with `url=https://<your host>{hooks.path}/NAME` and `secret_token=` `verify.secret`.',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: telegram, secret: "${TELEGRAM_WEBHOOK_SECRET}" }\nidempotencyKey: "{{update_id}}"\naction: wake\ntextTemplate: "Telegram from {{message.from.username}}: {{message.text}}"',
  },
};
