import { obj, secret } from '../schema-node.js';
import { url, type ProviderSpec } from './spec.js';

export const slack: ProviderSpec<'slack'> = {
  name: 'slack',
  schema: obj('Slack app.', {
    botToken: secret('Bot user OAuth token (xoxb-…).'),
    apiBase: url('Slack API base URL.', 'https://slack.com'),
  }),
  limit: 4000,
  summary: 'Create an app at [api.slack.com/apps](https://api.slack.com/apps), add the `chat:write` bot scope under *OAuth & Permissions*, install it to the workspace and copy the *Bot User OAuth Token* (`xoxb-…`) from that page; invite the bot to the channel (`/invite @yourbot`). `to` is a channel id (`C…`, in the channel\'s details), or a user id for a direct message.',
  example: 'providers:\n  slack:\n    botToken: ${SLACK_BOT_TOKEN}',
  required: ['botToken'],
};
