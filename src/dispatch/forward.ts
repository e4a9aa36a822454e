import type { ForwardConfig, WakeMode } from '../config/types.js';
import type { Forwarded, NewForward, NewRun } from '../store/records.js';
import { base, classify, failure, request } from './providers/http.js';

/**
 * Forward mode (CONTRACT.md §9, README "Forward mode"): hookrelay accepts, stores and then
 * hands every action to an upstream OpenClaw-compatible hooks gateway, which runs the model,
 * the heartbeat and chat delivery. This file is the upstream's side of the outbox: what a
 * forward row carries ({@link wakeForward}, {@link agentForward}) and ONE attempt to send it
 * ({@link createForwarder}); retries, back-off and records are the outbox's, as for replies.
 */

/** The upstream accepted the action: its HTTP status and, for an agent action, its own run id. */
export type ForwardAck = Forwarded;

/**
 * One attempt at `POST {url}/{path}`: resolves on a 2xx, rejects with a DeliveryError (the
 * upstream's short reason, never the token) classed like a provider's: a network error, a
 * time-out (`runtime.forward.timeoutSeconds`), 408, 429 and 5xx are retryable (Retry-After
 * honoured), any other status is not.
 */
export type Forwarder = (path: NewForward['path'], key: string, body: string, signal: AbortSignal) => Promise<ForwardAck>;

/** The outbox row of an accepted wake: the body OpenClaw's `POST /hooks/wake` takes. */
export function wakeForward(eventId: string, text: string, mode: WakeMode, createdAt: string): NewForward {
  return { kind: 'forward', path: 'wake', key: eventId, body: JSON.stringify({ text, mode }), createdAt };
}

/**
 * The outbox row of an accepted agent run: the body OpenClaw's `POST /hooks/agent` takes,
 * with only what the sender gave (CONTRACT.md §9), so that it is accepted under OpenClaw's
 * default hooks settings (openclaw/openclaw src/gateway/hooks.ts):
 *
 * - `agentId` and `sessionMode` only when the request gave them;
 * - `sessionKey` only when the request or mapping named one (`given.sessionKey`): OpenClaw refuses a
 *   request key unless `hooks.allowRequestSessionKey`, and hookrelay's own default
 *   (hooks.defaultSessionKey, `hook:<uuid>`) would be such a key there;
 * - `channel` and `to` only for a concrete provider: OpenClaw refuses `channel: "last"` with
 *   `deliver`, and leaving both out means its own last recipient;
 * - `deliver` always: hookrelay's mappings default to false, OpenClaw's to true;
 * - `wakeMode` only when it is `next-heartbeat` (`now` is OpenClaw's default too).
 */
export function agentForward(run: NewRun, given: { sessionKey: boolean; agentId?: string }): NewForward {
  const body: Record<string, unknown> = { message: run.message };
  if (run.name !== undefined) body.name = run.name;
  if (given.agentId !== undefined) body.agentId = given.agentId;
  if (given.sessionKey) body.sessionKey = run.sessionKey;
  if (run.wakeMode !== 'now') body.wakeMode = run.wakeMode;
  body.deliver = run.deliver;
  if (run.deliver && run.provider !== 'last') {
    body.channel = run.provider;
    if (run.to !== undefined) body.to = run.to;
  }
  if (run.model !== undefined) body.model = run.model;
  if (run.thinking !== undefined) body.thinking = run.thinking;
  if (run.timeoutSeconds !== undefined) body.timeoutSeconds = run.timeoutSeconds;
  if (run.sessionMode !== undefined) body.sessionMode = run.sessionMode;
  return { kind: 'forward', path: 'agent', key: run.runId, body: JSON.stringify(body), createdAt: run.createdAt };
}

/**
 * Builds the sender of forward rows. Every attempt carries `X-OpenClaw-Idempotency-Key: <id>`
 * (the event's or run's id, the same on every retry and after a restart), so that an upstream
 * that honours it acts once however often an answer was lost on the way back.
 */
export function createForwarder(cfg: ForwardConfig, fetchImpl: typeof fetch = fetch): Forwarder {
  const root = base(cfg.url ?? '');
  const timeoutMs = cfg.timeoutSeconds * 1000;
  const secrets = [cfg.token];
  return async (path, key, body, signal) => {
    const answer = await request(fetchImpl, 'upstream', `${root}/${path}`, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.token}`, 'x-openclaw-idempotency-key': key },
      body,
    }, { signal, timeoutMs }, secrets);
    if (answer.status >= 200 && answer.status < 300) {
      const runId = (answer.body as { runId?: unknown } | undefined)?.runId;
      return typeof runId === 'string' && runId !== '' ? { status: answer.status, upstreamRunId: runId } : { status: answer.status };
    }
    const reason = reasonOf(answer.body);
    throw failure('upstream', reason ? `HTTP ${answer.status}: ${reason}` : `HTTP ${answer.status}`, secrets, classify(answer));
  };
}

/**
 * The upstream's own words: OpenClaw answers `{ok:false, error:"…"}`; a hookrelay upstream
 * `{ok:false, error:{code, message}}`. Plain-text answers (401 "Unauthorized") leave the status.
 */
function reasonOf(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | undefined)?.error;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}
