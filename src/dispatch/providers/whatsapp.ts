import type { ProvidersConfig } from '../../config/types.js';
import { base, classify, failure, request, secretsOf } from './http.js';
import type { Sender } from './sender.js';

/** https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages */
export function whatsapp(cfg: NonNullable<ProvidersConfig['whatsapp']>): Sender {
  const endpoint = `${base(cfg.apiBase)}/${encodeURIComponent(cfg.apiVersion)}/${encodeURIComponent(cfg.phoneNumberId)}/messages`;
  return async (to, text, opts) => {
    const secrets = secretsOf([cfg.accessToken], text);
    const answer = await request('whatsapp', endpoint, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.accessToken}` },
      body: JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'text', text: { body: text } }),
    }, opts, secrets);
    if (answer.status < 300) return;
    const error = (answer.body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
    const reason = typeof error?.message === 'string'
      ? `${error.message}${typeof error.code === 'number' ? ` (code ${error.code})` : ''}`
      : `HTTP ${answer.status}`;
    throw failure('whatsapp', reason, secrets, classify(answer));
  };
}
