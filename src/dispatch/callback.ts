import { createHmac } from 'node:crypto';
import { callbackUrlProblem, type HostRule } from '../callback-url.js';
import type { NewCallback, RunEnd, RunRecord } from '../store/records.js';
import { classify, failure, request } from './providers/http.js';

/** Run callbacks (CONTRACT.md §14): one more kind of outbox row, whose retries are the outbox's. */

export type CallbackSender = (url: string, id: string, body: string, signal: AbortSignal) => Promise<void>;

/** The callback row committed with a run's end; undefined when the run asked for none. */
export function callbackOf(run: RunRecord, end: RunEnd): NewCallback | undefined {
  if (run.callbackUrl === undefined) return undefined;
  const body: Record<string, unknown> = { runId: run.runId, sessionKey: run.sessionKey, status: end.status };
  for (const key of ['reply', 'error', 'errorCode'] as const) if (end[key] !== undefined) body[key] = end[key];
  return { kind: 'callback', url: run.callbackUrl, body: JSON.stringify(body), createdAt: end.endedAt };
}

/** Standard Webhooks' scheme, https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md */
export function signCallback(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Signed afresh at each attempt under the same `webhook-id` (the run id). Redirects are not
 * followed: their host was never checked against `allowed`, asked at every attempt.
 */
export function createCallbackSender(secret: string, timeoutMs: number, allowed: () => HostRule): CallbackSender {
  const secrets = [secret];
  return async (url, id, body, signal) => {
    const problem = callbackUrlProblem(url, allowed());
    if (problem) throw failure('callback', `the URL ${problem}`, secrets, { retryable: false });
    const timestamp = Math.floor(Date.now() / 1000);
    const answer = await request('callback', url, {
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signCallback(secret, id, timestamp, body),
      },
      body,
      redirect: 'manual',
    }, { signal, timeoutMs }, secrets);
    if (answer.status >= 200 && answer.status < 300) return;
    throw failure('callback', `HTTP ${answer.status}`, secrets, classify(answer));
  };
}
