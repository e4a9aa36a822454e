import { randomUUID } from 'node:crypto';
import type { ProvidersConfig } from '../../config/types.js';
import { base, classify, failure, request, secretsOf } from './http.js';
import type { Sender } from './sender.js';

/** BlueBubbles (https://docs.bluebubbles.app/server/developer-guides/rest-api-and-webhooks): the password is in the query, so no URL goes into an error. */
export function imessage(cfg: NonNullable<ProvidersConfig['imessage']>): Sender {
  const endpoint = `${base(cfg.apiBase)}/api/v1/message/text?password=${encodeURIComponent(cfg.password)}`;
  return async (to, text, opts) => {
    const secrets = secretsOf([cfg.password], text);
    const answer = await request('imessage', endpoint, {
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
}
