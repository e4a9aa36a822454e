/**
 * What every delivery provider implements: ONE attempt to send one part (`text`, already
 * within the provider's limit) to `to` (the provider's own kind of address: chat id, phone
 * number, channel id, conversation id). Resolves once the provider accepted it; rejects with a
 * {@link DeliveryError}. Retrying and splitting belong to the caller (`delivery.ts`, later the
 * outbox), so that a retry resumes at the first part not yet accepted.
 */
export type Sender = (to: string, text: string, opts: SendOptions) => Promise<void>;

export interface SendOptions {
  /** Aborts the attempt (the gateway is stopping). */
  signal?: AbortSignal;
  /** Time limit of this one request (`delivery.timeoutSeconds`). */
  timeoutMs: number;
}

/** How a failed attempt may be retried (CONTRACT.md §9). */
export interface RetryClass {
  /** Network error, time-out, 408, 429, 5xx: worth another attempt. Any other 4xx: not. */
  retryable: boolean;
  /** The provider asked to wait this long first (Retry-After, Telegram's retry_after…). */
  retryAfterMs?: number;
}

/**
 * A delivery failure whose message is safe to store in a run summary and show to the user:
 * the provider's own short description or code, never a token, a URL with credentials or the
 * message text.
 */
export class DeliveryError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs?: number;

  constructor(message: string, retry: RetryClass = { retryable: false }) {
    super(message);
    this.name = 'DeliveryError';
    this.retryable = retry.retryable;
    if (retry.retryAfterMs !== undefined) this.retryAfterMs = retry.retryAfterMs;
  }
}
