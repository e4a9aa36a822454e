import type { SenderDescriptor } from './descriptor.js';
import { bodyHmac } from './body-hmac.js';
import { echo, type Handshake } from './handshake.js';

const codec = bodyHmac('X-Dropbox-Signature', 'hmac-sha256', 'hex');

/** `GET ?challenge=C` → C; it carries no secret, so its form is its check. */
const handshake: Handshake = {
  method: 'GET',
  check: 'own',
  is: () => true,
  answer: (req) => echo(req.query.get('challenge'), 'the query parameter challenge'),
};

/** Dropbox: `X-Dropbox-Signature`, a hex HMAC-SHA256 of the body with the app secret: https://www.dropbox.com/developers/reference/webhooks */
export const dropbox: SenderDescriptor = {
  scheme: 'dropbox',
  checks: '`X-Dropbox-Signature`, hex HMAC-SHA256 of the body with the app secret; the verification `GET ?challenge=` echoed as text/plain',
  credential: 'secret',
  codec: () => codec,
  handshake,
  docs: {
    sender: 'Dropbox',
    settings: 'App Console → the app → Settings: App secret = `verify.secret`; Webhooks: add `https://<your host>{hooks.path}/NAME` (Dropbox verifies it with a GET at once).',
    mapping: 'match: { path: NAME }\nauth: signature\nverify: { scheme: dropbox, secret: "${DROPBOX_APP_SECRET}" }\naction: wake\ntextTemplate: "Dropbox: files changed for {{list_folder.accounts.[0]}}"',
  },
};
