import type { ProvidersConfig } from '../../config/types.js';
import { base, classify, failure, request, secretsOf } from './http.js';
import type { Sender } from './sender.js';

/** signal-cli REST API (https://github.com/bbernhard/signal-cli-rest-api); it has no credential of its own. */
export function signal(cfg: NonNullable<ProvidersConfig['signal']>): Sender {
  const endpoint = `${base(cfg.apiBase)}/v2/send`;
  return async (to, text, opts) => {
    const secrets = secretsOf([], text);
    const answer = await request('signal', endpoint, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: text, number: cfg.number, recipients: [to] }),
    }, opts, secrets);
    if (answer.status < 300) return;
    const error = (answer.body as { error?: unknown } | undefined)?.error;
    throw failure('signal', typeof error === 'string' ? error : `HTTP ${answer.status}`, secrets, classify(answer));
  };
}
