import type { Provider } from '../../config/types.js';
import type { ProviderSpec } from '../../providers/spec.js';
import type { Sender } from './sender.js';

/** A provider's spec (src/providers/, which config/ reads without loading senders) and its sender's factory. */
export interface ProviderDescriptor<C = any> extends ProviderSpec<Provider> {
  create(config: C, fetchImpl: typeof fetch): Sender;
}
