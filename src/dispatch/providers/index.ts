import { discord } from './discord.js';
import { imessage } from './imessage.js';
import { msteams } from './msteams.js';
import { signal } from './signal.js';
import { slack } from './slack.js';
import { telegram } from './telegram.js';
import { whatsapp } from './whatsapp.js';

import type { ProviderDescriptor } from './descriptor.js';

export type { ProviderDescriptor };

/** In the order of src/providers/index.ts. */
export const PROVIDER_DESCRIPTORS: readonly ProviderDescriptor[] = [whatsapp, telegram, signal, imessage, discord, slack, msteams];
