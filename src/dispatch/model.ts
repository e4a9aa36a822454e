import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AgentConfig, Thinking } from '../config/types.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import type { RunError } from '../run-errors.js';
import { isRetryableStatus, parseRetryAfter } from './retry.js';

const SDK_TIMEOUT_SLACK_MS = 1_000;

type Sdk = typeof OpenAI;
/**
 * The SDK is loaded at the first model call, not at start-up: it is ~10 MiB and ~0.1 s of
 * loading that a gateway which has not run an agent turn yet does not need (start-up time and
 * resident memory are benchmark figures). No SDK error can exist before it is loaded.
 */
let sdk: Sdk | undefined;
async function loadSdk(): Promise<Sdk> {
  sdk ??= (await import('openai')).default;
  return sdk;
}

/** One Chat Completions call of the built-in runtime. */
export interface ModelRequest {
  model: string;
  messages: ChatCompletionMessageParam[];
  /** `off` or absent: no `reasoning_effort` is sent. */
  thinking?: Thinking;
  /** Aborts the call (timeout or shutdown); the promise then rejects at once. */
  signal: AbortSignal;
  /**
   * The caller's time limit, which `signal` enforces. The SDK's own per-attempt timer is set
   * a little later, so that a slow call ends as the caller's timeout (`timed_out`), not as an
   * SDK connection error.
   */
  timeoutMs: number;
}

/** The model seam used by the heartbeat and the runner (through `model-turn.ts`). */
export interface ModelClient {
  /**
   * Resolves with the assistant's text. Connection errors, 408, 429 and 5xx are retried with
   * exponential backoff (a server's Retry-After is waited out) until `signal` aborts or the
   * attempts are used up; rejects on any other failure (see {@link ModelClient.explain}).
   */
  complete(req: ModelRequest): Promise<string>;
  /**
   * A failure as a run shows it: a stable code and a short text naming the model server by
   * host (from `agent.baseUrl`) — never the API key, the URL's query, or the server's own
   * message (it may quote the prompt); its path only for a 404, with what to check.
   */
  explain(err: unknown): RunError;
}

/** How failed model calls are retried. */
export interface RetryPolicy {
  /** Calls at most, the first included. */
  attempts: number;
  /** The first retry waits this long, each next one twice as long (plus 0–20 % jitter)… */
  baseMs: number;
  /** …but at most this long, unless the server's Retry-After asks for longer. */
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 500, maxMs: 30_000 };

/** Failures that are ours rather than the server's (empty reply, refusal). */
class ModelReplyError extends Error {
  constructor(readonly code: 'model_empty_reply' | 'model_refused', message: string) {
    super(message);
    this.name = 'ModelReplyError';
  }
}

/**
 * Creates the one OpenAI client of the process (official `openai` package, pointed at
 * `agent.baseUrl`, so any OpenAI-compatible server works: Ollama, vLLM, LM Studio, …).
 */
export function createModelClient(agent: AgentConfig, log: Logger, fetchImpl?: typeof fetch, retry: RetryPolicy = DEFAULT_RETRY): ModelClient {
  // Only the host names the server in errors (the URL's userinfo, path or query may hold
  // secrets) — except a 404 of the endpoint itself, where the path is what to fix.
  const host = hostOf(agent.baseUrl);
  const endpoint = endpointOf(agent.baseUrl);
  let client: OpenAI | undefined;
  const getClient = async (): Promise<OpenAI> =>
    (client ??= new (await loadSdk())({
      baseURL: agent.baseUrl,
      // Local servers take no key, but the SDK refuses to start without one.
      apiKey: agent.apiKey || 'none',
      // Retries are ours (below): bounded by the caller's signal, and a Retry-After is honoured.
      maxRetries: 0,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    }));
  // Models that answered 400 to `reasoning_effort`: later calls leave it out up front.
  const noReasoning = new Set<string>();

  async function call(req: ModelRequest, withEffort: boolean): Promise<string> {
    const body: ChatCompletionCreateParamsNonStreaming = { model: req.model, messages: req.messages };
    if (withEffort && req.thinking && req.thinking !== 'off') body.reasoning_effort = req.thinking;
    const res = await abortable((await getClient()).chat.completions.create(body, { signal: req.signal, timeout: req.timeoutMs + SDK_TIMEOUT_SLACK_MS }), req.signal);
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
      // "thinking … where the model takes it": servers and models that do not know the
      // parameter answer 400 naming it; retry once without, and remember the model.
      if (withEffort && !req.signal.aborted && rejectsReasoningEffort(err)) {
        noReasoning.add(req.model);
        log.info({ model: logValue(req.model) }, 'model does not take reasoning_effort; retrying without it');
        return call(req, false);
      }
      throw err;
    }
  }

  const explain = (err: unknown): RunError => explainModelError(err, host, endpoint);

  return {
    explain,
    async complete(req) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(req);
        } catch (err) {
          const wait = attempt < retry.attempts && !req.signal.aborted ? retryDelay(err, attempt, retry) : undefined;
          if (wait === undefined) throw err;
          log.info({ attempt, waitMs: Math.round(wait), error: explain(err).message }, 'model call failed; retrying');
          await sleep(wait, req.signal); // the caller's time limit ends the wait too
        }
      }
    },
  };
}

/** The URL the SDK posts to, `{agent.baseUrl}/chat/completions`, without userinfo, query or fragment. */
function endpointOf(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return `${u.origin}${u.pathname.replace(/\/+$/, '')}/chat/completions`;
  } catch {
    return 'agent.baseUrl + /chat/completions';
  }
}

/** `agent.baseUrl`'s host (and port), for messages. */
function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host || 'agent.baseUrl';
  } catch {
    return 'agent.baseUrl';
  }
}

/**
 * How long to wait before retrying a failed call, or undefined when it is not worth retrying:
 * connection failures, 408, 429 and 5xx are (the server may come back, or asked us to slow
 * down); any other answer would be the same again. A Retry-After (`retry-after-ms`, seconds or
 * an HTTP date, RFC 9110 §10.2.3) is waited out in full, even past `maxMs`: the caller's time
 * limit still ends the wait.
 */
function retryDelay(err: unknown, attempt: number, policy: RetryPolicy): number | undefined {
  if (!sdk || !(err instanceof sdk.APIError)) return undefined;
  const status = err.status;
  const retryable = err instanceof sdk.APIConnectionError || (status !== undefined && isRetryableStatus(status));
  if (!retryable) return undefined;
  const asked = retryAfterMs(err.headers);
  if (asked !== undefined) return asked;
  const backoff = Math.min(policy.baseMs * 2 ** (attempt - 1), policy.maxMs);
  return backoff * (1 + Math.random() * 0.2);
}

/** OpenAI's `retry-after-ms`, else the standard `Retry-After`. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  return parseRetryAfter(headers?.get('retry-after'));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return abortable(new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), signal);
}

function rejectsReasoningEffort(err: unknown): boolean {
  if (!sdk || !(err instanceof sdk.APIError) || err.status !== 400) return false;
  return /reasoning[_ ]?effort/i.test(`${err.param ?? ''} ${err.message}`);
}

/**
 * Settles as soon as `signal` aborts. The SDK's retry back-off is a plain sleep that ignores
 * the signal, so without this a timeout or shutdown could wait for it (up to a server's
 * Retry-After).
 */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}

/**
 * What to check after an answer that says the request went to the wrong place: a 404 with
 * OpenAI's `model_not_found` names the model; any other 404 is the endpoint itself, most often
 * a base URL without `/v1` (the SDK appends only `/chat/completions`); 401/403 the key.
 */
function hint(status: number, code: unknown, endpoint: string): string {
  if (status === 404 && code === 'model_not_found') return ': check agent.model (or the mapping\'s model)';
  if (status === 404) return ` at ${endpoint}: check agent.baseUrl — OpenAI-compatible servers usually end in /v1`;
  if (status === 401 || status === 403) return ': check agent.apiKey';
  return '';
}

/**
 * A model failure as a run shows it (see {@link ModelClient.explain}): the HTTP status and the
 * server's error code, never the server's message nor the API key.
 */
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
