import type { Config, Provider, ProviderOrLast } from '../config/types.js';
import { unconfiguredProvider } from '../config/schema.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import { PROVIDER_DESCRIPTORS } from './providers/index.js';
import { DeliveryError, type Sender } from './providers/sender.js';
import { splitText } from './providers/split.js';

export { DeliveryError };

/** A concrete recipient: provider plus its kind of address. */
export interface DeliveryTarget {
  provider: Provider;
  to: string;
}

/** Sends replies to users. Rejects with a {@link DeliveryError} whose message is safe to show. */
export interface Delivery {
  send(target: DeliveryTarget, text: string, signal?: AbortSignal): Promise<void>;
}

/** `provider:to`, as summaries and `RunRecord.deliveredTo` write a recipient. */
export function formatTarget(t: DeliveryTarget): string {
  return `${t.provider}:${t.to}`;
}

/** Per-request time-out when none is given (CONTRACT.md §9, `delivery.timeoutSeconds`). */
const DEFAULT_TIMEOUT_MS = 30_000;
/** A Retry-After up to this long is waited out once in process; a longer one fails the delivery. */
const MAX_GRACE_MS = 10_000;

/**
 * The delivery registry built from `config.providers`: one {@link Sender} per configured
 * provider. A reply longer than the provider's limit goes out as several messages, in order;
 * a part that fails retryably with a short Retry-After is tried once more after that wait
 * (a small in-process grace for flood control), any other failure ends the delivery.
 */
export function createDelivery(
  providers: Config['providers'],
  log: Logger,
  fetchImpl: typeof fetch = fetch,
  options: { timeoutMs?: number } = {},
): Delivery {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const senders = new Map<Provider, { send: Sender; limit: number }>();
  for (const p of PROVIDER_DESCRIPTORS) {
    if (unconfiguredProvider(p.name, providers) === undefined) senders.set(p.name, { send: p.create(providers[p.name], fetchImpl), limit: p.limit });
  }

  return {
    async send(target, text, signal) {
      const sender = senders.get(target.provider);
      if (!sender) {
        throw new DeliveryError(`provider ${target.provider} is not configured (${unconfiguredProvider(target.provider, providers) ?? `providers.${target.provider} is missing`})`);
      }
      const parts = splitText(text, sender.limit);
      for (const part of parts) {
        try {
          await sender.send(target.to, part, { signal, timeoutMs });
        } catch (err) {
          const wait = err instanceof DeliveryError && err.retryable ? err.retryAfterMs : undefined;
          if (wait === undefined || wait > MAX_GRACE_MS || signal?.aborted) throw err;
          await sleep(wait, signal);
          await sender.send(target.to, part, { signal, timeoutMs });
        }
      }
      log.info({ provider: target.provider, to: logValue(target.to), chars: text.length, parts: parts.length }, 'reply delivered');
    },
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(new DeliveryError('aborted', { retryable: true })); }, { once: true });
  });
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
