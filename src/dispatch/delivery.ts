import type { Config, Provider, ProviderOrLast } from '../config/types.js';
import { unconfiguredProvider } from '../config/schema.js';
import { PROVIDER_DESCRIPTORS } from './providers/index.js';
import type { Sender } from './providers/sender.js';
import { splitText } from './providers/split.js';
import { backoffMs } from './retry.js';

export interface DeliveryTarget {
  provider: Provider;
  to: string;
}

export type Delivery = ReturnType<typeof createDelivery>;

export function createDelivery(providers: Config['providers']) {
  const senders = new Map<Provider, Sender>();
  const limits = new Map<Provider, number>();
  for (const p of PROVIDER_DESCRIPTORS) {
    limits.set(p.name, p.limit);
    if (unconfiguredProvider(p.name, providers) === undefined) senders.set(p.name, p.create(providers[p.name]));
  }
  return {
    /** `problem` says why a provider has no sender (what to configure). */
    sender(provider: Provider): Sender | { problem: string } {
      return senders.get(provider)
        ?? { problem: `provider ${provider} is not configured (${unconfiguredProvider(provider, providers) ?? `providers.${provider} is missing`})` };
    },
    /** In order, by the provider's limit (CONTRACT.md §9). */
    split(provider: Provider, text: string): string[] {
      return splitText(text, limits.get(provider) ?? Number.MAX_SAFE_INTEGER);
    },
  };
}

export interface BackoffPolicy {
  maxDelayMs: number;
  random?: () => number;
}

/** The wait before retry `n` (CONTRACT.md §9): capped exponential plus 0–20 % jitter; a Retry-After is waited out in full. */
export function retryDelayMs(n: number, retryAfterMs: number | undefined, policy: BackoffPolicy): number {
  const delay = Math.round(backoffMs(n, 1000, policy.maxDelayMs, policy.random));
  return retryAfterMs !== undefined && retryAfterMs > delay ? retryAfterMs : delay;
}

/** A run's `provider`/`to` (CONTRACT.md §5): `last` is the main session's last recipient, else `whatsapp` for a mapping's run. */
export function resolveTarget(
  run: { provider: ProviderOrLast; to?: string; source: string },
  last: DeliveryTarget | undefined,
): { target: DeliveryTarget } | { problem: string } {
  let provider: Provider;
  let to = run.to;
  if (run.provider === 'last') {
    if (last) {
      provider = last.provider;
      to ??= last.to;
    } else if (run.source.startsWith('mapping:')) {
      provider = 'whatsapp';
    } else {
      return { problem: 'no known last recipient (set session.provider and session.to, or give provider and to)' };
    }
  } else {
    provider = run.provider;
    if (to === undefined && last?.provider === provider) to = last.to;
  }
  if (!to) return { problem: `no recipient address (to) for ${provider}` };
  return { target: { provider, to } };
}
