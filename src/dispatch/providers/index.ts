import type { Provider, ProvidersConfig } from '../../config/types.js';
import { PROVIDER_SPECS } from '../../providers/index.js';
import { discord } from './discord.js';
import { imessage } from './imessage.js';
import { msteams } from './msteams.js';
import type { Sender } from './sender.js';
import { signal } from './signal.js';
import { slack } from './slack.js';
import { telegram } from './telegram.js';
import { whatsapp } from './whatsapp.js';

const SENDERS: { [P in Provider]: (config: NonNullable<ProvidersConfig[P]>) => Sender } = {
  whatsapp, telegram, signal, imessage, discord, slack, msteams,
};

/** Each provider's spec (src/providers/, which config/ reads without loading senders) and its sender's factory, in the order of src/providers/index.ts. */
export const PROVIDER_DESCRIPTORS = PROVIDER_SPECS.map((spec) => {
  const name = spec.name as Provider;
  return { ...spec, name, create: SENDERS[name] as (config: any) => Sender };
});
