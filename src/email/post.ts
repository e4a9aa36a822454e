import { setTimeout as sleep } from 'node:timers/promises';
import { request } from '../dispatch/providers/http.js';
import { backoffMs, isRetryableStatus } from '../dispatch/retry.js';
import type { Logger } from '../log.js';
import type { MailFields } from './message.js';

/** One mail per request: its progress is recorded after its own 2xx, and a refused mail cannot hold back the next (CONTRACT.md §7). */

export interface HookTarget {
  url: string;
  token: string;
}

/** `accepted`: a 2xx (a replay too); `refused`: a 4xx that no retry can change (400, 413, 422). */
export type PostOutcome = { outcome: 'accepted' | 'refused'; status: number; code?: string };

// 401/403/404 are the gateway's config (token, preset not enabled), not the mail's fault:
// they are retried, so that nothing is lost while the user fixes the config.
const RETRIED = (status: number) => isRetryableStatus(status) || [401, 403, 404].includes(status);

/** Retries network errors, 408, 429, 5xx and the config statuses with back-off until `signal` aborts. */
export async function postMail(target: HookTarget, mail: MailFields, key: string, uid: number, log: Logger, signal: AbortSignal): Promise<PostOutcome> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${target.token}`, 'idempotency-key': key };
  const body = JSON.stringify({ source: 'email', messages: [mail] });
  for (let attempt = 1; ; attempt++) {
    let reason: string;
    try {
      const res = await request('hook', target.url, { headers, body }, { signal, timeoutMs: 30_000 }, [target.token]);
      if (res.status >= 200 && res.status < 300) return { outcome: 'accepted', status: res.status };
      const code = (res.body as { error?: { code?: string } } | null | undefined)?.error?.code;
      if (!RETRIED(res.status)) return { outcome: 'refused', status: res.status, code };
      reason = `${res.status}${code ? ` ${code}` : ''}${advice(res.status)}`;
    } catch (e) {
      signal.throwIfAborted();
      reason = (e as Error).message;
    }
    const wait = backoffMs(attempt, 1000, 30_000);
    log.warn({ uid, attempt, url: target.url }, `the hook did not take the mail (${reason}); retrying in ${(wait / 1000).toFixed(1)}s`);
    await sleep(wait, undefined, { signal });
  }
}

function advice(status: number): string {
  if (status === 401 || status === 403) return ': the token does not match the gateway\'s hooks.token';
  if (status === 404) return ': is `email` in the gateway\'s hooks.presets, and hookUrl right?';
  return '';
}
