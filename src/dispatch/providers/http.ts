import { isRetryableStatus, parseRetryAfter } from '../retry.js';
import { DeliveryError, type RetryClass, type SendOptions } from './sender.js';

/** A provider's answer; `body` parsed as JSON, undefined when it is not. */
export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

const MAX_REASON = 200;

/** One request under the attempt's time-out and signal; only no answer throws, and `secrets` never appear in an error. */
export async function request(
  provider: string,
  url: string,
  init: { headers: Record<string, string>; body: string; redirect?: RequestRedirect },
  opts: SendOptions,
  secrets: readonly string[],
): Promise<Answer> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  try {
    const res = await fetch(url, { method: 'POST', headers: init.headers, body: init.body, signal, redirect: init.redirect });
    const raw = await res.text();
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body };
  } catch (err) {
    if (opts.signal?.aborted) throw new DeliveryError(`${provider}: aborted`, { retryable: true });
    if (timeout.aborted) throw new DeliveryError(`${provider}: no answer within ${opts.timeoutMs / 1000} s`, { retryable: true });
    // undici puts the system error (ECONNREFUSED, ENOTFOUND…) in `cause`; its message may hold the URL.
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    const detail = typeof code === 'string' ? ` (${safeReason(code, secrets)})` : '';
    throw new DeliveryError(`${provider}: request failed${detail}`, { retryable: true });
  }
}

/** 408, 429 and 5xx are retryable (CONTRACT.md §9); a provider's own `retryAfterSeconds` wins over `Retry-After` (RFC 9110 §10.2.3). */
export function classify(answer: Answer, retryAfterSeconds?: unknown): RetryClass {
  const { status } = answer;
  const retryable = isRetryableStatus(status);
  const retryAfterMs = typeof retryAfterSeconds === 'number' && retryAfterSeconds >= 0
    ? Math.ceil(retryAfterSeconds * 1000)
    : parseRetryAfter(answer.headers.get('retry-after'));
  return retryAfterMs === undefined ? { retryable } : { retryable, retryAfterMs };
}

export function failure(provider: string, reason: unknown, secrets: readonly string[], retry: RetryClass): DeliveryError {
  const text = typeof reason === 'string' && reason.trim() ? reason : 'unexpected answer';
  return new DeliveryError(`${provider}: ${safeReason(text, secrets)}`, retry);
}

/** Redacted before the cap, so a cut cannot leave part of a secret behind; logs escape control characters (printable.ts). */
export function safeReason(reason: string, secrets: readonly string[]): string {
  let out = reason;
  for (const s of secrets) {
    if (!s) continue;
    out = out.split(s).join('[redacted]');
    const encoded = encodeURIComponent(s);
    if (encoded !== s) out = out.split(encoded).join('[redacted]');
  }
  out = out.trim();
  return out.length > MAX_REASON ? `${out.slice(0, MAX_REASON - 1)}…` : out;
}

/** `to` as exactly one path segment: `.`, `..` (WHATWG URL §4.4 resolves them) and empty are refused. */
export function pathSegment(provider: string, to: string, what: string): string {
  if (to === '' || to === '.' || to === '..') {
    throw new DeliveryError(`${provider}: to ${JSON.stringify(to)} is not a ${what}: give the ${what} itself`);
  }
  return encodeURIComponent(to);
}

export function base(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The message text counts as a secret when long enough that a provider quoting it back would leak the reply. */
export function secretsOf(credentials: readonly string[], text: string): string[] {
  return text.length >= 16 ? [...credentials, text] : [...credentials];
}
