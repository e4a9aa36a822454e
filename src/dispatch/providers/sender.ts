/** ONE attempt to send one part; splitting and retrying are the outbox's. */
export type Sender = (to: string, text: string, opts: SendOptions) => Promise<void>;

export interface SendOptions {
  signal?: AbortSignal;
  timeoutMs: number;
}

export interface RetryClass {
  retryable: boolean;
  /** The provider asked to wait this long first. */
  retryAfterMs?: number;
}

/** Its message is safe to store and show: the provider's own words, never a token, credentialed URL or the message text. */
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
