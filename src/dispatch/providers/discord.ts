import type { ProvidersConfig } from '../../config/types.js';
import { base, classify, failure, pathSegment, request, secretsOf } from './http.js';
import type { Sender } from './sender.js';

/** https://discord.com/developers/docs/resources/message#create-message; a 429's body carries `retry_after` in seconds (https://discord.com/developers/docs/topics/rate-limits). */
export function discord(cfg: NonNullable<ProvidersConfig['discord']>): Sender {
  const root = `${base(cfg.apiBase)}/api/v10/channels/`;
  return async (to, text, opts) => {
    const secrets = secretsOf([cfg.botToken], text);
    const answer = await request('discord', `${root}${pathSegment('discord', to, 'channel id')}/messages`, {
      headers: {
        'content-type': 'application/json',
        authorization: `Bot ${cfg.botToken}`,
        // Discord asks bots to name themselves this way (https://discord.com/developers/docs/reference#user-agent).
        'user-agent': 'DiscordBot (https://github.com/hookrelay/hookrelay, 0.1)',
      },
      body: JSON.stringify({ content: text }),
    }, opts, secrets);
    if (answer.status < 300) return;
    const body = answer.body as { message?: unknown; code?: unknown; retry_after?: unknown } | undefined;
    const reason = typeof body?.message === 'string'
      ? `${body.message}${typeof body.code === 'number' && body.code !== 0 ? ` (code ${body.code})` : ''}`
      : `HTTP ${answer.status}`;
    throw failure('discord', reason, secrets, classify(answer, body?.retry_after));
  };
}
