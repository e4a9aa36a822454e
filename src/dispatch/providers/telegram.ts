import type { ProvidersConfig } from '../../config/types.js';
import { base, classify, failure, request, secretsOf } from './http.js';
import type { Sender } from './sender.js';

/** Plain text (no parse_mode), so model output cannot break parsing; flood control sends `parameters.retry_after` (https://core.telegram.org/bots/api#responseparameters). */
export function telegram(cfg: NonNullable<ProvidersConfig['telegram']>): Sender {
  const endpoint = `${base(cfg.apiBase)}/bot${cfg.botToken}/sendMessage`;
  return async (to, text, opts) => {
    const secrets = secretsOf([cfg.botToken], text);
    const answer = await request('telegram', endpoint, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: to, text }),
    }, opts, secrets);
    const body = answer.body as { ok?: boolean; description?: unknown; parameters?: { retry_after?: unknown } } | undefined;
    if (answer.status < 300 && body?.ok !== false) return;
    throw failure('telegram', body?.description ?? `HTTP ${answer.status}`, secrets, classify(answer, body?.parameters?.retry_after));
  };
}
