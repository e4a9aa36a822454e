import { obj, secret } from '../schema-node.js';
import { url, type ProviderSpec } from './spec.js';

export const discord: ProviderSpec<'discord'> = {
  name: 'discord',
  schema: obj('Discord bot.', {
    botToken: secret('Bot token.'),
    apiBase: url('Discord API base URL.', 'https://discord.com'),
  }),
  limit: 2000,
  summary: 'In the [Discord developer portal](https://discord.com/developers/applications) create an application, then *Bot → Reset Token* gives the bot token; invite the bot to your server with the *Send Messages* permission (*OAuth2 → URL Generator*, scope `bot`). `to` is a channel id (turn on Developer Mode, right-click the channel, *Copy Channel ID*).',
  example: 'providers:\n  discord:\n    botToken: ${DISCORD_BOT_TOKEN}',
  required: ['botToken'],
};
