import type { Config, Provider, ProviderOrLast } from '../config/types.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import { DeliveryError, type Sender } from './providers/sender.js';
import { createTelegramSender } from './providers/telegram.js';

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

/**
 * The delivery registry built from `config.providers`. Telegram is wired today; the other
 * providers of CONTRACT.md §3 answer "not available yet" until they are added behind
 * {@link Sender}.
 */
export function createDelivery(providers: Config['providers'], log: Logger, fetchImpl?: typeof fetch): Delivery {
  const senders = new Map<Provider, Sender>();
  const telegram = providers.telegram;
  if (telegram?.botToken) senders.set('telegram', createTelegramSender(telegram, fetchImpl));

  return {
    async send(target, text, signal) {
      const sender = senders.get(target.provider);
      if (!sender) {
        throw new DeliveryError(
          target.provider === 'telegram'
            ? 'provider telegram is not configured (providers.telegram.botToken is empty)'
            : `provider ${target.provider} is not available yet`,
        );
      }
      await sender(target.to, text, signal);
      log.info({ provider: target.provider, to: logValue(target.to), chars: text.length }, 'reply delivered');
    },
  };
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
