import { createHmac } from 'node:crypto';
import { callbackUrlProblem, type HostRule } from '../callback-url.js';
import type { NewCallback, RunEnd, RunRecord } from '../store/records.js';
import { classify, failure, request } from './providers/http.js';

/**
 * Run callbacks (CONTRACT.md §14, docs/callbacks.md): what a callback row carries
 * ({@link callbackOf}) and ONE signed attempt to POST it ({@link createCallbackSender}).
 * Retries, back-off, Retry-After and "never again once acknowledged" are the outbox's, as for
 * replies (outbox-row.ts): a callback is one more kind of outbox row.
 */

/** One attempt: resolves on a 2xx; rejects with a DeliveryError classed like a provider's. */
export type CallbackSender = (url: string, id: string, body: string, signal: AbortSignal) => Promise<void>;

/**
 * The callback row of a run that ends with `end`, committed with that end (Store.finishRun):
 * `{runId, sessionKey, status, reply?, error?, errorCode?}`; undefined when the run asked for
 * none.
 */
export function callbackOf(run: RunRecord, end: RunEnd): NewCallback | undefined {
  if (run.callbackUrl === undefined) return undefined;
  const body: Record<string, unknown> = { runId: run.runId, sessionKey: run.sessionKey, status: end.status };
  if (end.reply !== undefined) body.reply = end.reply;
  if (end.error !== undefined) body.error = end.error;
  if (end.errorCode !== undefined) body.errorCode = end.errorCode;
  return { kind: 'callback', url: run.callbackUrl, body: JSON.stringify(body), createdAt: end.endedAt };
}

/**
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the base64 after `whsec_`
 * (Standard Webhooks, https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 * "Signature scheme"); what a receiver's standard-webhooks library verifies.
 */
export function signCallback(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Builds the sender of callback rows. Each attempt is signed afresh (`webhook-timestamp` is the
 * attempt's time, so a receiver's tolerance check passes on a late retry) under the same
 * `webhook-id` — the run id — so that a receiver that saw an attempt whose answer was lost
 * recognises the retry. A redirect is not followed (it fails the callback, as a 3xx): the
 * receiver's host was checked against hooks.callbackHosts, the redirect's would not be.
 * `allowed` is the hooks.callbackHosts being served now, asked at every attempt: an operator
 * who narrows the list (a reload, a restart) stops the callbacks already queued to a host it
 * no longer lists — such an attempt fails for good, naming the setting.
 */
export function createCallbackSender(secret: string, timeoutMs: number, allowed: () => HostRule, fetchImpl: typeof fetch = fetch): CallbackSender {
  const secrets = [secret];
  return async (url, id, body, signal) => {
    const problem = callbackUrlProblem(url, allowed());
    if (problem) throw failure('callback', `the URL ${problem}`, secrets, { retryable: false });
    const timestamp = Math.floor(Date.now() / 1000);
    const answer = await request(fetchImpl, 'callback', url, {
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
