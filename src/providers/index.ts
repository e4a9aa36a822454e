import { discord } from './discord.js';
import { imessage } from './imessage.js';
import { msteams } from './msteams.js';
import { signal } from './signal.js';
import { slack } from './slack.js';
import { telegram } from './telegram.js';
import { whatsapp } from './whatsapp.js';
import type { ProviderSpec } from './spec.js';

/** Every delivery provider (CONTRACT.md §3), in the order of the docs; dispatch/providers/index.ts adds their senders. */
export const PROVIDER_SPECS: readonly ProviderSpec[] = [whatsapp, telegram, signal, imessage, discord, slack, msteams];
