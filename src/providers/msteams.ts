import { obj, secret, str } from '../schema-node.js';
import { url, type ProviderSpec } from './spec.js';

export const msteams: ProviderSpec<'msteams'> = {
  name: 'msteams',
  schema: obj('Microsoft Teams through the Bot Framework.', {
    appId: str('Microsoft App ID of the bot.', ''),
    appPassword: secret('Client secret of the bot\'s app registration.'),
    tokenUrl: url('Client-credentials token endpoint; a single-tenant bot uses https://login.microsoftonline.com/<tenant id>/oauth2/v2.0/token.', 'https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token'),
    serviceUrl: url('Bot Framework service URL of the conversations, as received in the activities the bot gets (e.g. https://smba.trafficmanager.net/teams/).'),
  }, { required: ['serviceUrl'] }),
  limit: 4000,
  summary: 'Create an *Azure Bot* resource in the Azure portal (or register the bot in the Teams Developer Portal): its *Configuration* page shows the Microsoft App ID, and *Manage Password* (the app registration\'s *Certificates & secrets*) creates the client secret. Add the Teams channel and install the bot in Teams. `to` is a conversation id and `serviceUrl` the service URL, both from an activity the bot received (`conversation.id`, `serviceUrl`).',
  example: 'providers:\n  msteams:\n    appId: 00000000-0000-0000-0000-000000000000\n    appPassword: ${TEAMS_APP_PASSWORD}\n    serviceUrl: https://smba.trafficmanager.net/teams/',
  required: ['appId', 'appPassword', 'serviceUrl'],
};
