import { obj, secret } from '../schema-node.js';
import { url, type ProviderSpec } from './spec.js';

export const imessage: ProviderSpec<'imessage'> = {
  name: 'imessage',
  schema: obj('A BlueBubbles server (iMessage on a Mac).', {
    password: secret('BlueBubbles server password.'),
    apiBase: url('Base URL of the BlueBubbles server, e.g. http://mac.local:1234.'),
    method: {
      type: 'string', enum: ['apple-script', 'private-api'], default: 'apple-script',
      description: 'How BlueBubbles sends: `apple-script` works everywhere; `private-api` needs its Private API helper enabled.',
    },
  }, { required: ['apiBase'] }),
  limit: 4000,
  summary: 'Install the [BlueBubbles server](https://bluebubbles.app) on a Mac signed in to iMessage; its *Settings* show the server password and address (use a private network, a proxy with TLS or its Cloudflare/ngrok option to reach it). `to` is a chat guid such as `iMessage;-;+15551234567` (BlueBubbles lists them at `/api/v1/chat/query`).',
  example: 'providers:\n  imessage:\n    password: ${BLUEBUBBLES_PASSWORD}\n    apiBase: http://192.168.1.20:1234',
  required: ['apiBase', 'password'],
};
