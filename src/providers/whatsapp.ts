import { obj, secret, str } from '../schema-node.js';
import { url, type ProviderSpec } from './spec.js';

export const whatsapp: ProviderSpec<'whatsapp'> = {
  name: 'whatsapp',
  schema: obj('WhatsApp Cloud API.', {
    accessToken: secret('Bearer token of the WhatsApp Cloud API (a system user token).'),
    phoneNumberId: str('Id of the sending phone number (not the number itself).', ''),
    apiVersion: str('Graph API version.', 'v21.0'),
    apiBase: url('Graph API base URL.', 'https://graph.facebook.com'),
  }),
  limit: 4096,
  summary: 'In the [Meta app dashboard](https://developers.facebook.com/apps/), add the WhatsApp product to a business app: *WhatsApp → API Setup* shows the phone number id; create a permanent access token for a system user in Business Settings (the dashboard\'s temporary token expires after a day). `to` is the recipient\'s phone number with country code, digits only.',
  example: 'providers:\n  whatsapp:\n    accessToken: ${WHATSAPP_ACCESS_TOKEN}\n    phoneNumberId: "106540352242922"',
  required: ['accessToken', 'phoneNumberId'],
};
