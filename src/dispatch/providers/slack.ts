import type { ProvidersConfig } from '../../config/types.js';
import { base, classify, failure, request, secretsOf } from './http.js';
import type { Sender } from './sender.js';

/** https://api.slack.com/methods/chat.postMessage answers 200 with `ok: false`; only Slack's trouble codes are retried (https://api.slack.com/apis/rate-limits). */
const TRANSIENT = new Set(['ratelimited', 'rate_limited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

export function slack(cfg: NonNullable<ProvidersConfig['slack']>): Sender {
  const endpoint = `${base(cfg.apiBase)}/api/chat.postMessage`;
  return async (to, text, opts) => {
    const secrets = secretsOf([cfg.botToken], text);
    const answer = await request('slack', endpoint, {
      headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${cfg.botToken}` },
      body: JSON.stringify({ channel: to, text }),
    }, opts, secrets);
    const body = answer.body as { ok?: unknown; error?: unknown } | undefined;
    if (answer.status < 300 && body?.ok === true) return;
    const code = typeof body?.error === 'string' ? body.error : undefined;
    if (answer.status < 300) {
      const retryable = code !== undefined && TRANSIENT.has(code);
      throw failure('slack', code ?? 'unexpected answer (no ok: true)', secrets, { ...classify(answer), retryable });
    }
    throw failure('slack', code ?? `HTTP ${answer.status}`, secrets, classify(answer));
  };
}
