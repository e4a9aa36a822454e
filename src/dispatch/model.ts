import { setTimeout as sleep } from 'node:timers/promises';
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AgentConfig, Thinking } from '../config/types.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import type { RunError } from '../run-errors.js';
import type { HistoryMessage } from '../store/records.js';
import type { Store } from '../store/store.js';
import { backoffMs, isRetryableStatus, parseRetryAfter } from './retry.js';

const SDK_TIMEOUT_SLACK_MS = 1_000;

/** Loaded at the first model call: a gateway that has not run an agent turn does not need it. */
let sdk: typeof OpenAI | undefined;

export interface ModelRequest {
  model: string;
  messages: ChatCompletionMessageParam[];
  thinking?: Thinking;
  signal: AbortSignal;
  /** The caller's limit, which `signal` enforces; the SDK's timer is set a little later so a slow call ends as `timed_out`. */
  timeoutMs: number;
}

export type ModelClient = ReturnType<typeof createModelClient>;

export interface RetryPolicy {
  attempts: number;
  /** The first retry's wait, doubled each time (plus 0–20 % jitter) up to `maxMs`, unless Retry-After asks for longer. */
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 500, maxMs: 30_000 };

class ModelReplyError extends Error {
  constructor(readonly code: 'model_empty_reply' | 'model_refused', message: string) {
    super(message);
    this.name = 'ModelReplyError';
  }
}

/** The process's one OpenAI client, at `agent.baseUrl`: any OpenAI-compatible server works. */
export function createModelClient(agent: AgentConfig, log: Logger, retry: RetryPolicy = DEFAULT_RETRY) {
  const { host, endpoint } = serverOf(agent.baseUrl);
  let client: OpenAI | undefined;
  const getClient = async (): Promise<OpenAI> =>
    (client ??= new (sdk ??= (await import('openai')).default)({
      baseURL: agent.baseUrl,
      // Local servers take no key, but the SDK refuses to start without one.
      apiKey: agent.apiKey || 'none',
      // Ours instead: bounded by the caller's signal, and Retry-After is honoured.
      maxRetries: 0,
    }));
  // Models that answered 400 to `reasoning_effort`: later calls leave it out up front.
  const noReasoning = new Set<string>();

  async function call(req: ModelRequest, withEffort: boolean): Promise<string> {
    const body: ChatCompletionCreateParamsNonStreaming = { model: req.model, messages: req.messages };
    if (withEffort && req.thinking && req.thinking !== 'off') body.reasoning_effort = req.thinking;
    const res = await (await getClient()).chat.completions.create(body, { signal: req.signal, timeout: req.timeoutMs + SDK_TIMEOUT_SLACK_MS });
    const message = res.choices?.[0]?.message;
    if (message?.refusal) throw new ModelReplyError('model_refused', 'the model refused to answer');
    const text = typeof message?.content === 'string' ? message.content : '';
    if (text.trim() === '') throw new ModelReplyError('model_empty_reply', 'the model returned an empty reply');
    return text;
  }

  async function once(req: ModelRequest): Promise<string> {
    const withEffort = !noReasoning.has(req.model) && req.thinking !== undefined && req.thinking !== 'off';
    try {
      return await call(req, withEffort);
    } catch (err) {
      // Servers that do not know the parameter answer 400 naming it: retry once without it.
      if (withEffort && !req.signal.aborted && rejectsReasoningEffort(err)) {
        noReasoning.add(req.model);
        log.info({ model: logValue(req.model) }, 'model does not take reasoning_effort; retrying without it');
        return call(req, false);
      }
      throw err;
    }
  }

  /** A failure as a run shows it: a stable code, the server by host — never the key, query or the server's message (it may quote the prompt). */
  const explain = (err: unknown): RunError => explainModelError(err, host, endpoint);

  return {
    explain,
    /** Resolves with the assistant's text; retries connection errors, 408, 429 and 5xx until `signal` aborts or attempts run out. */
    async complete(req: ModelRequest): Promise<string> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(req);
        } catch (err) {
          const wait = attempt < retry.attempts && !req.signal.aborted ? retryDelay(err, attempt, retry) : undefined;
          if (wait === undefined) throw err;
          log.info({ attempt, waitMs: Math.round(wait), error: explain(err).message }, 'model call failed; retrying');
          await sleep(wait, undefined, { signal: req.signal, ref: false });
        }
      }
    },
  };
}

/** The server's host, and `{agent.baseUrl}/chat/completions` without userinfo, query or fragment (they may hold secrets). */
function serverOf(baseUrl: string): { host: string; endpoint: string } {
  try {
    const u = new URL(baseUrl);
    return { host: u.host || 'agent.baseUrl', endpoint: `${u.origin}${u.pathname.replace(/\/+$/, '')}/chat/completions` };
  } catch {
    return { host: 'agent.baseUrl', endpoint: 'agent.baseUrl + /chat/completions' };
  }
}

/** The wait before a retry, or undefined when the same answer would come again; a Retry-After (RFC 9110 §10.2.3) in full. */
function retryDelay(err: unknown, attempt: number, policy: RetryPolicy): number | undefined {
  if (!sdk || !(err instanceof sdk.APIError)) return undefined;
  const status = err.status;
  const retryable = err instanceof sdk.APIConnectionError || (status !== undefined && isRetryableStatus(status));
  if (!retryable) return undefined;
  // OpenAI's own `retry-after-ms` first.
  const ms = Number(err.headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  return parseRetryAfter(err.headers?.get('retry-after')) ?? backoffMs(attempt, policy.baseMs, policy.maxMs);
}

function rejectsReasoningEffort(err: unknown): boolean {
  if (!sdk || !(err instanceof sdk.APIError) || err.status !== 400) return false;
  return /reasoning[_ ]?effort/i.test(`${err.param ?? ''} ${err.message}`);
}

/** A 404 other than `model_not_found` is most often a base URL without `/v1` (the SDK appends only `/chat/completions`). */
function hint(status: number, code: unknown, endpoint: string): string {
  if (status === 404 && code === 'model_not_found') return ': check agent.model (or the mapping\'s model)';
  if (status === 404) return ` at ${endpoint}: check agent.baseUrl — OpenAI-compatible servers usually end in /v1`;
  if (status === 401 || status === 403) return ': check agent.apiKey';
  return '';
}

function explainModelError(err: unknown, host: string, endpoint: string): RunError {
  if (err instanceof ModelReplyError) return { code: err.code, message: err.message };
  if (sdk && err instanceof sdk.APIConnectionTimeoutError) return { code: 'model_unreachable', message: `the model server at ${host} did not answer in time` };
  if (sdk && err instanceof sdk.APIConnectionError) return { code: 'model_unreachable', message: `could not reach the model server at ${host}` };
  if (sdk && err instanceof sdk.APIError && err.status !== undefined) {
    const code = typeof err.code === 'string' && /^[\w.-]{1,64}$/.test(err.code) ? ` (${err.code})` : '';
    return { code: 'model_http', message: `the model server at ${host} answered HTTP ${err.status}${code}${hint(err.status, err.code, endpoint)}` };
  }
  return { code: 'model_failed', message: `the model call to ${host} failed` };
}

export interface TurnRequest {
  /** Its last `historyTurns` turns are sent before `user`. */
  sessionKey: string;
  historyTurns: number;
  system?: string;
  /** As the model sees it: fenced already where it must be. */
  user: string;
  model: string;
  thinking?: Thinking;
  timeoutSeconds: number;
  stop: AbortSignal;
}

/** `turns` is what to append to the session once the reply is stored. */
export type TurnResult =
  | { kind: 'reply'; reply: string; turns: HistoryMessage[] }
  | { kind: 'stopped' }
  | { kind: 'timed_out'; afterSeconds: number; error: RunError }
  | { kind: 'failed'; error: RunError };

/** The one place a model call is put together; a model failure resolves with what happened, only a store failure rejects. */
export async function modelTurn(deps: { store: Store; model: ModelClient; log: Logger }, req: TurnRequest): Promise<TurnResult> {
  const history = await deps.store.history(req.sessionKey, req.historyTurns * 2);
  const messages: ChatCompletionMessageParam[] = [
    ...(req.system ? [{ role: 'system' as const, content: req.system }] : []),
    ...history,
    { role: 'user', content: req.user },
  ];
  const timeoutMs = req.timeoutSeconds * 1000;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const reply = await deps.model.complete({
      model: req.model,
      messages,
      thinking: req.thinking,
      signal: AbortSignal.any([req.stop, timeout]),
      timeoutMs,
    });
    return { kind: 'reply', reply, turns: [{ role: 'user', content: req.user }, { role: 'assistant', content: reply }] };
  } catch (err) {
    if (req.stop.aborted) return { kind: 'stopped' };
    if (timeout.aborted) {
      return { kind: 'timed_out', afterSeconds: req.timeoutSeconds, error: { code: 'model_timeout', message: `timed out after ${req.timeoutSeconds} s` } };
    }
    // The server's own message may quote the prompt: debug level only (STYLE.md "expose or log").
    deps.log.debug({ err }, 'model error detail');
    return { kind: 'failed', error: deps.model.explain(err) };
  }
}
