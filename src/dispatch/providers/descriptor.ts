import type { Provider } from '../../config/types.js';
import type { ProviderSpec } from '../../providers/spec.js';
import type { Sender } from './sender.js';

/**
 * One delivery provider with its code: its spec (config schema, limit, docs, required keys:
 * src/providers/<name>.ts, which config/ reads without loading senders) and the factory of
 * its {@link Sender}.
 */
export interface ProviderDescriptor<C = any> extends ProviderSpec<Provider> {
  create(config: C, fetchImpl: typeof fetch): Sender;
}
