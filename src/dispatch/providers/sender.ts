/**
 * What every delivery provider implements: send `text` to `to` (the provider's own kind of
 * address: chat id, phone number, channel id). Resolves once the provider accepted every part.
 */
export type Sender = (to: string, text: string, signal?: AbortSignal) => Promise<void>;

/**
 * A delivery failure whose message is safe to store in a run summary and show to the user:
 * the provider's own description, never a token, URL with credentials or the message text.
 */
export class DeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryError';
  }
}
