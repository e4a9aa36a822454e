import type { KeptAnswer } from '../engine/decide.js';
import { answerJson } from './answer.js';
import type { Exchange } from './exchange.js';
import { answerMapping, fromStored } from './mapping-answer.js';

/** The header that says an answer is a replay of the first one (CONTRACT.md §8). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Marks the answer about to be written as a replay of a first answer (the header, and the request-log row). */
export function markReplayed(ex: Exchange): void {
  ex.replayed = true;
  ex.res.setHeader(REPLAYED_HEADER, 'true');
}

/** Answers with a kept first answer, marked as a replay. */
export function answerReplay(ex: Exchange, stored: KeptAnswer): void {
  markReplayed(ex);
  // A mapping's `response` is kept in its own envelope (mapping-answer.ts).
  const own = fromStored(stored.status, stored.body);
  if (own) answerMapping(ex, own);
  else answerJson(ex, stored.status, stored.body);
}
