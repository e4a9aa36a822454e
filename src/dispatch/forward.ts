import type { ForwardConfig, WakeMode } from '../config/types.js';
import type { Forwarded, NewForward, NewRun } from '../store/records.js';
import { base, classify, failure, request } from './providers/http.js';

/** Forward mode (CONTRACT.md §9): ONE attempt to send a forward row upstream; retries are the outbox's. */

/** One attempt at `POST {url}/{path}`: resolves on a 2xx, else rejects with a DeliveryError classed like a provider's. */
export type Forwarder = (path: NewForward['path'], key: string, body: string, signal: AbortSignal) => Promise<Forwarded>;

/** The body OpenClaw's `POST /hooks/wake` takes. */
export function wakeForward(eventId: string, text: string, mode: WakeMode, createdAt: string): NewForward {
  return { kind: 'forward', path: 'wake', key: eventId, body: JSON.stringify({ text, mode }), createdAt };
}

/**
 * The body OpenClaw's `POST /hooks/agent` takes, with only what the sender gave, so its default
 * hooks settings accept it (openclaw/openclaw src/gateway/hooks.ts); `deliver` is always sent.
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

/** Every attempt carries the row's id as `X-OpenClaw-Idempotency-Key`, so an upstream that honours it acts once however often an answer was lost. */
export function createForwarder(cfg: ForwardConfig): Forwarder {
  const root = base(cfg.url ?? '');
  const timeoutMs = cfg.timeoutSeconds * 1000;
  const secrets = [cfg.token];
  return async (path, key, body, signal) => {
    const answer = await request('upstream', `${root}/${path}`, {
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

/** OpenClaw answers `{ok:false, error:"…"}`, a hookrelay upstream `{ok:false, error:{code, message}}`. */
function reasonOf(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | undefined)?.error;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}
