import type { Config, Provider, ProviderOrLast } from '../config/types.js';
import { unconfiguredProvider } from '../config/schema.js';
import { PROVIDER_DESCRIPTORS } from './providers/index.js';
import { DeliveryError, type Sender } from './providers/sender.js';
import { splitText } from './providers/split.js';

export { DeliveryError };

/** A concrete recipient: provider plus its kind of address. */
export interface DeliveryTarget {
  provider: Provider;
  to: string;
}

/** One provider's sending seam and its message size limit. */
export interface ProviderSender {
  send: Sender;
  limit: number;
}

/**
 * The delivery providers built from `config.providers`: the {@link Sender} of each configured
 * provider; `problem` says why a provider has none (what to configure).
 */
export interface Delivery {
  sender(provider: Provider): ProviderSender | { problem: string };
  /** The reply split into parts by the provider's limit (CONTRACT.md §9), in order. */
  split(provider: Provider, text: string): string[];
}

/** Builds the registry: one sender per configured provider (CONTRACT.md §3's table). */
export function createDelivery(providers: Config['providers'], fetchImpl: typeof fetch = fetch): Delivery {
  const senders = new Map<Provider, ProviderSender>();
  const limits = new Map<Provider, number>();
  for (const p of PROVIDER_DESCRIPTORS) {
    limits.set(p.name, p.limit);
    if (unconfiguredProvider(p.name, providers) === undefined) senders.set(p.name, { send: p.create(providers[p.name], fetchImpl), limit: p.limit });
  }
  return {
    sender(provider) {
      return senders.get(provider)
        ?? { problem: `provider ${provider} is not configured (${unconfiguredProvider(provider, providers) ?? `providers.${provider} is missing`})` };
    },
    split(provider, text) {
      return splitText(text, limits.get(provider) ?? Number.MAX_SAFE_INTEGER);
    },
  };
}

/** The back-off rule's inputs (`delivery.*`), and the jitter source (injectable for specs). */
export interface BackoffPolicy {
  maxDelayMs: number;
  /** Uniform in [0, 1). */
  random?: () => number;
}

/**
 * How long to wait before retry `n` (1-based: after the n-th failed attempt), CONTRACT.md §9:
 * min(2^(n−1) s, maxDelay) plus 0–20 % jitter — so that many deliveries failing together do
 * not all come back at the same instant — unless the provider asked for longer
 * (`retryAfterMs`: Retry-After, Telegram's retry_after), which is waited out in full, even
 * beyond the cap: sending earlier would only be refused again.
 */
export function retryDelayMs(n: number, retryAfterMs: number | undefined, policy: BackoffPolicy): number {
  const base = Math.min(2 ** Math.max(0, n - 1) * 1000, policy.maxDelayMs);
  const delay = Math.round(base * (1 + 0.2 * (policy.random ?? Math.random)()));
  return retryAfterMs !== undefined && retryAfterMs > delay ? retryAfterMs : delay;
}

/** Where a run's reply goes, or why it cannot go anywhere. */
export type TargetResolution = { target: DeliveryTarget } | { problem: string };

/**
 * Resolves a run's `provider`/`to` (CONTRACT.md §5): `last` is the main session's last
 * recipient, with the run's `to` overriding the address; with no known last recipient, a
 * run that came from a mapping (`source` `mapping:<id>`) falls back to `whatsapp`. An explicit
 * provider without `to` borrows the last recipient's address only when it is the same provider.
 */
export function resolveTarget(
  run: { provider: ProviderOrLast; to?: string; source: string },
  last: DeliveryTarget | undefined,
): TargetResolution {
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
