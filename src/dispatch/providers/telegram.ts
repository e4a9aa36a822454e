import type { ProvidersConfig } from '../../config/types.js';
import { DeliveryError, type Sender } from './sender.js';

/** `providers.telegram`: `botToken`, `apiBase` (default https://api.telegram.org). */
export type TelegramConfig = NonNullable<ProvidersConfig['telegram']>;

/** Telegram's limit on one message's text (Bot API `sendMessage`). */
export const TELEGRAM_MAX_TEXT = 4096;
/** Per request; a reply of several parts gets this for each part. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Waiting longer than this for a 429 is better left to the next message. */
const MAX_RETRY_AFTER_S = 10;

/**
 * Telegram delivery: `POST {apiBase}/bot{botToken}/sendMessage` with `{chat_id, text}`,
 * plain text (no parse_mode, so model output cannot break Markdown/HTML parsing). Long texts
 * go out as several messages, in order. Errors carry Telegram's `description`, never the token.
 */
export function createTelegramSender(cfg: TelegramConfig, fetchImpl: typeof fetch = fetch): Sender {
  const url = `${(cfg.apiBase || 'https://api.telegram.org').replace(/\/+$/, '')}/bot${cfg.botToken}/sendMessage`;
  const redact = (s: string) => (cfg.botToken ? s.split(cfg.botToken).join('[redacted]') : s);

  async function post(chatId: string, text: string, signal?: AbortSignal): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
      let res: Response;
      try {
        res = await fetchImpl(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ chat_id: chatId, text }),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (err) {
        if (signal?.aborted) throw new DeliveryError('telegram: aborted');
        if (timeout.aborted) throw new DeliveryError('telegram: no answer within 15 s');
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        throw new DeliveryError(`telegram: request failed${cause ? ` (${redact(String(cause))})` : ''}`);
      }
      const body = (await res.json().catch(() => undefined)) as
        | { ok?: boolean; description?: string; parameters?: { retry_after?: number } }
        | undefined;
      if (res.ok && body?.ok !== false) return;
      const retryAfter = body?.parameters?.retry_after;
      // Flood control: one bounded wait, then give up (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this).
      if (res.status === 429 && attempt === 0 && typeof retryAfter === 'number' && retryAfter <= MAX_RETRY_AFTER_S) {
        await sleep(retryAfter * 1000, signal);
        continue;
      }
      const description = typeof body?.description === 'string' ? body.description.slice(0, 200) : `HTTP ${res.status}`;
      throw new DeliveryError(`telegram: ${redact(description)}`);
    }
  }

  return async (to, text, signal) => {
    for (const part of splitText(text, TELEGRAM_MAX_TEXT)) await post(to, part, signal);
  };
}

/**
 * Splits `text` into parts of at most `limit` UTF-16 units (Telegram counts in UTF-16),
 * preferring the last newline, else the last space, in the second half of a part; a hard cut
 * never splits a surrogate pair. The newline or space at a split is dropped; blank parts are
 * left out.
 */
export function splitText(text: string, limit: number = TELEGRAM_MAX_TEXT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    let cut = window.lastIndexOf('\n');
    if (cut < limit / 2) cut = window.lastIndexOf(' ');
    let skip = 1;
    if (cut < limit / 2) {
      cut = limit;
      skip = 0;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut + skip);
  }
  parts.push(rest);
  return parts.filter((p) => p.trim() !== '');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(new DeliveryError('telegram: aborted')); }, { once: true });
  });
}
