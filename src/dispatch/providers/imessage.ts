import { randomUUID } from 'node:crypto';
import type { ProvidersConfig } from '../../config/types.js';
import { credential, section, url, type ProviderDescriptor } from './descriptor.js';
import { base, classify, failure, request, secretsOf } from './http.js';

/** `providers.imessage`. */
export type IMessageConfig = NonNullable<ProvidersConfig['imessage']>;

/**
 * A BlueBubbles server (https://docs.bluebubbles.app/server/developer-guides/rest-api-and-webhooks):
 * `POST {apiBase}/api/v1/message/text?password=…` `{chatGuid, tempGuid, message, method}`.
 * The password travels in the query, so no URL ever goes into an error. An error is
 * `{status, message, error: {type, message}}`. `tempGuid` is unique per message: BlueBubbles
 * uses it to match the sent message, and drops a duplicate.
 */
export const imessage: ProviderDescriptor<IMessageConfig> = {
  name: 'imessage',
  schema: section('A BlueBubbles server (iMessage on a Mac).', {
    password: credential('BlueBubbles server password.'),
    apiBase: url('Base URL of the BlueBubbles server, e.g. http://mac.local:1234.'),
    method: {
      type: 'string', enum: ['apple-script', 'private-api'], default: 'apple-script',
      description: 'How BlueBubbles sends: `apple-script` works everywhere; `private-api` needs its Private API helper enabled.',
    },
  }, ['apiBase']),
  limit: 4000,
  summary: 'Install the [BlueBubbles server](https://bluebubbles.app) on a Mac signed in to iMessage; its *Settings* show the server password and address (use a private network, a proxy with TLS or its Cloudflare/ngrok option to reach it). `to` is a chat guid such as `iMessage;-;+15551234567` (BlueBubbles lists them at `/api/v1/chat/query`).',
  example: 'providers:\n  imessage:\n    password: ${BLUEBUBBLES_PASSWORD}\n    apiBase: http://192.168.1.20:1234',
  required: ['apiBase', 'password'],
  create(cfg, fetchImpl) {
    const endpoint = `${base(cfg.apiBase)}/api/v1/message/text?password=${encodeURIComponent(cfg.password)}`;
    return async (to, text, opts) => {
      const secrets = secretsOf([cfg.password], text);
      const answer = await request(fetchImpl, 'imessage', endpoint, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chatGuid: to, tempGuid: `temp-${randomUUID()}`, message: text, method: cfg.method ?? 'apple-script' }),
      }, opts, secrets);
      const body = answer.body as { status?: unknown; message?: unknown; error?: { message?: unknown } } | undefined;
      // BlueBubbles repeats the status in the body; trust the worse of the two.
      const status = typeof body?.status === 'number' && body.status >= 300 ? body.status : answer.status;
      if (status < 300) return;
      const reason = typeof body?.error?.message === 'string' ? body.error.message : body?.message ?? `HTTP ${status}`;
      throw failure('imessage', reason, secrets, classify({ ...answer, status }));
    };
  },
};
