import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Thinking } from '../config/types.js';
import type { Logger } from '../log.js';
import type { RunError } from '../run-errors.js';
import type { HistoryMessage } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { ModelClient } from './model.js';

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
