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
 * Every delivery provider (CONTRACT.md §3), in the order of the docs. The config schema,
 * the "is it configured" rule, the README and `delivery.ts` all read this one list.
 */
export const PROVIDER_DESCRIPTORS: readonly ProviderDescriptor[] = [whatsapp, telegram, signal, imessage, discord, slack, msteams];
