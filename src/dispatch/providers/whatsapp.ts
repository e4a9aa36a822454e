import type { ProvidersConfig } from '../../config/types.js';
import { credential, section, text, url, type ProviderDescriptor } from './descriptor.js';
import { base, classify, failure, request, secretsOf } from './http.js';

/** `providers.whatsapp`. */
export type WhatsAppConfig = NonNullable<ProvidersConfig['whatsapp']>;

/**
 * WhatsApp Cloud API: `POST {apiBase}/{apiVersion}/{phoneNumberId}/messages`, Bearer, a text
 * message (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages). An
 * error is Graph's `{error: {message, code}}`.
 */
export const whatsapp: ProviderDescriptor<WhatsAppConfig> = {
  name: 'whatsapp',
  schema: section('WhatsApp Cloud API.', {
    accessToken: credential('Bearer token of the WhatsApp Cloud API (a system user token).'),
    phoneNumberId: text('Id of the sending phone number (not the number itself).', ''),
    apiVersion: text('Graph API version.', 'v21.0'),
    apiBase: url('Graph API base URL.', 'https://graph.facebook.com'),
  }),
  limit: 4096,
  summary: 'In the [Meta app dashboard](https://developers.facebook.com/apps/), add the WhatsApp product to a business app: *WhatsApp → API Setup* shows the phone number id; create a permanent access token for a system user in Business Settings (the dashboard\'s temporary token expires after a day). `to` is the recipient\'s phone number with country code, digits only.',
  example: 'providers:\n  whatsapp:\n    accessToken: ${WHATSAPP_ACCESS_TOKEN}\n    phoneNumberId: "106540352242922"',
  required: ['accessToken', 'phoneNumberId'],
  create(cfg, fetchImpl) {
    const endpoint = `${base(cfg.apiBase)}/${encodeURIComponent(cfg.apiVersion)}/${encodeURIComponent(cfg.phoneNumberId)}/messages`;
    return async (to, text, opts) => {
      const secrets = secretsOf([cfg.accessToken], text);
      const answer = await request(fetchImpl, 'whatsapp', endpoint, {
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
  },
};
