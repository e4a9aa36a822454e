import { isRetryableStatus, parseRetryAfter } from '../retry.js';
import { DeliveryError, type RetryClass, type SendOptions } from './sender.js';

/** A provider's answer: status, headers and the body parsed as JSON (undefined when it is not). */
export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** Longest provider reason kept in an error: enough for a description, short enough for a summary. */
const MAX_REASON = 200;

/**
 * One HTTP request to a provider, under the attempt's time-out and abort signal. Only a
 * failure to get an answer throws (network error, time-out, abort: all retryable); any HTTP
 * status is returned for the provider to read. `secrets` are the credentials (and the message
 * text) that must never appear in an error.
 */
export async function request(
  fetchImpl: typeof fetch,
  provider: string,
  url: string,
  init: { method?: string; headers: Record<string, string>; body: string; redirect?: RequestRedirect },
  opts: SendOptions,
  secrets: readonly string[],
): Promise<Answer> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  try {
    const res = await fetchImpl(url, { method: init.method ?? 'POST', headers: init.headers, body: init.body, signal, redirect: init.redirect });
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

/**
 * The retry class of an HTTP failure (CONTRACT.md §9): 408, 429 and 5xx are retryable, any
 * other status is not. `retryAfterSeconds` (a provider's own body field) wins over the
 * `Retry-After` header (seconds or an HTTP date, RFC 9110 §10.2.3).
 */
export function classify(answer: Answer, retryAfterSeconds?: unknown): RetryClass {
  const { status } = answer;
  const retryable = isRetryableStatus(status);
  const retryAfterMs = typeof retryAfterSeconds === 'number' && retryAfterSeconds >= 0
    ? Math.ceil(retryAfterSeconds * 1000)
    : parseRetryAfter(answer.headers.get('retry-after'));
  return retryAfterMs === undefined ? { retryable } : { retryable, retryAfterMs };
}

/** A failed attempt as a {@link DeliveryError} `provider: reason`, the reason made safe. */
export function failure(provider: string, reason: unknown, secrets: readonly string[], retry: RetryClass): DeliveryError {
  const text = typeof reason === 'string' && reason.trim() ? reason : 'unexpected answer';
  return new DeliveryError(`${provider}: ${safeReason(text, secrets)}`, retry);
}

/**
 * A provider's own words made safe to store and show: every credential (also URL-encoded)
 * replaced, capped. A secret is redacted before the cap so that a cut cannot leave part of one
 * behind. Control characters stay, as in every stored text: logs escape them (printable.ts).
 */
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

/**
 * `to` as exactly one segment of a URL path, for the providers whose API puts the recipient
 * in the path (Discord's channel, Teams' conversation). encodeURIComponent escapes `/`, `?`,
 * `#` and `%`, but not dots, and a URL parser resolves a `.` or `..` segment (WHATWG URL
 * §4.4, "single-dot"/"double-dot" segments — fetch does it before sending): `to: ".."` sent
 * the Discord bot token to /api/v10/messages (issue 30). Those, and an empty `to`, name no
 * recipient: refused for good. (`%2e%2e` is safe: its `%` is escaped.)
 */
export function pathSegment(provider: string, to: string, what: string): string {
  if (to === '' || to === '.' || to === '..') {
    throw new DeliveryError(`${provider}: to ${JSON.stringify(to)} is not a ${what}: give the ${what} itself`);
  }
  return encodeURIComponent(to);
}

/** `apiBase` without trailing slashes, so that paths can be appended. */
export function base(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * The secrets of one attempt: the credentials, and the message text when it is long enough
 * that a provider quoting it back would leak the reply (short texts would garble reasons).
 */
export function secretsOf(credentials: readonly string[], text: string): string[] {
  return text.length >= 16 ? [...credentials, text] : [...credentials];
}
