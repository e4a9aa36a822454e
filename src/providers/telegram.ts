import { obj, secret } from '../schema-node.js';
import { url, type ProviderSpec } from './spec.js';

export const telegram: ProviderSpec<'telegram'> = {
  name: 'telegram',
  schema: obj('Telegram Bot API.', {
    botToken: secret('Bot token from @BotFather.'),
    apiBase: url('Bot API base URL.', 'https://api.telegram.org'),
  }),
  limit: 4096,
  summary: 'Create a bot with [@BotFather](https://t.me/BotFather) (`/newbot`); it answers with the bot token. `to` is a chat id: message your bot, then read `message.chat.id` from `https://api.telegram.org/bot<token>/getUpdates`.',
  example: 'providers:\n  telegram:\n    botToken: ${TELEGRAM_BOT_TOKEN}\nsession: { provider: telegram, to: "123456789" }',
  required: ['botToken'],
};
