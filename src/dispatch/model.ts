import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AgentConfig, Thinking } from '../config/types.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';

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

/** The model seam used by the heartbeat and the runner. */
export interface ModelClient {
  /** Resolves with the assistant's text; rejects on any failure (see {@link describeModelError}). */
  complete(req: ModelRequest): Promise<string>;
}

/** Failures that are ours rather than the server's (empty reply, refusal). */
export class ModelReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelReplyError';
  }
}

/**
 * Creates the one OpenAI client of the process (official `openai` package, pointed at
 * `agent.baseUrl`, so any OpenAI-compatible server works: Ollama, vLLM, LM Studio, …).
 */
export function createModelClient(agent: AgentConfig, log: Logger, fetchImpl?: typeof fetch): ModelClient {
  let client: OpenAI | undefined;
  const getClient = async (): Promise<OpenAI> =>
    (client ??= new (await loadSdk())({
      baseURL: agent.baseUrl,
      // Local servers take no key, but the SDK refuses to start without one.
      apiKey: agent.apiKey || 'none',
      // One retry for 429/5xx/connection resets; the caller's AbortSignal bounds the total time.
      maxRetries: 1,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    }));
  // Models that answered 400 to `reasoning_effort`: later calls leave it out up front.
  const noReasoning = new Set<string>();

  async function call(req: ModelRequest, withEffort: boolean): Promise<string> {
    const body: ChatCompletionCreateParamsNonStreaming = { model: req.model, messages: req.messages };
    if (withEffort && req.thinking && req.thinking !== 'off') body.reasoning_effort = req.thinking;
    const res = await abortable((await getClient()).chat.completions.create(body, { signal: req.signal, timeout: req.timeoutMs + SDK_TIMEOUT_SLACK_MS }), req.signal);
    const message = res.choices?.[0]?.message;
    if (message?.refusal) throw new ModelReplyError('the model refused to answer');
    const text = typeof message?.content === 'string' ? message.content : '';
    if (text.trim() === '') throw new ModelReplyError('the model returned an empty reply');
    return text;
  }

  return {
    async complete(req) {
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
    },
  };
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
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
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
 * A short, caller-safe description of a model failure: the HTTP status and the server's
 * error code, never the server's message (it may quote the prompt) nor the API key.
 */
export function describeModelError(err: unknown): string {
  if (err instanceof ModelReplyError) return err.message;
  if (!sdk) return 'the model call failed';
  if (err instanceof sdk.APIConnectionTimeoutError) return 'the model server did not answer in time';
  if (err instanceof sdk.APIConnectionError) return 'could not reach the model server';
  if (err instanceof sdk.APIError && err.status !== undefined) {
    const code = typeof err.code === 'string' && /^[\w.-]{1,64}$/.test(err.code) ? ` (${err.code})` : '';
    return `the model server answered HTTP ${err.status}${code}`;
  }
  return 'the model call failed';
}
