import { discord } from './discord.js';
import { imessage } from './imessage.js';
import { msteams } from './msteams.js';
import { signal } from './signal.js';
import { slack } from './slack.js';
import { telegram } from './telegram.js';
import { whatsapp } from './whatsapp.js';

import type { ProviderDescriptor } from './descriptor.js';

export type { ProviderDescriptor };

/**
 * Every delivery provider with its sender (`delivery.ts` builds them from this list), in the
 * order of src/providers/index.ts, whose specs the config schema and the docs read.
 */
export const PROVIDER_DESCRIPTORS: readonly ProviderDescriptor[] = [whatsapp, telegram, signal, imessage, discord, slack, msteams];
