import type { OutgoingHttpHeaders } from 'node:http';
import { BODYLESS_STATUSES } from '../config/answer-rules.js';
import type { KeptAnswer } from '../engine/decide.js';
import { DEFAULT_ANSWER_TYPE, type MappingAnswer } from '../mapping-answer.js';
import { answer, answerJson } from './answer.js';
import type { Exchange } from './exchange.js';

/** How an idempotency key keeps a mapping's own answer (CONTRACT.md §12): in an envelope no usual answer begins with. */

const ENVELOPE = '{"mappingAnswer":';

/** A mapping's body may echo a request on the console's origin: no browser may run it as a page. */
const CONTAINED: Readonly<OutgoingHttpHeaders> = Object.freeze({
  'content-security-policy': "default-src 'none'; sandbox",
  'x-content-type-options': 'nosniff',
});

/** Writes a mapping's answer: its status, its headers, and its body with its content type (a bodiless status gets neither). */
export function answerMapping(ex: Exchange, a: MappingAnswer): void {
  const headers: OutgoingHttpHeaders = { ...CONTAINED, ...a.headers };
  const body = a.body === undefined || BODYLESS_STATUSES.has(a.status) ? undefined : a.body;
  if (body !== undefined) headers['content-type'] = a.contentType;
  answer(ex, a.status, headers, body);
}

export function storedMappingAnswer(a: MappingAnswer): string {
  return `${ENVELOPE}${JSON.stringify({ contentType: a.contentType, body: a.body ?? null })}}`;
}

/** Marks the answer about to be written as a replay of a first answer (its header, CONTRACT.md §8, and the request-log row). */
export function markReplayed(ex: Exchange): void {
  ex.replayed = true;
  ex.res.setHeader('Idempotent-Replayed', 'true');
}

/** Answers with an idempotency key's stored first answer: a mapping's own (in its envelope) or a usual JSON one. */
export function answerReplay(ex: Exchange, stored: KeptAnswer): void {
  markReplayed(ex);
  if (!stored.body.startsWith(ENVELOPE)) return answerJson(ex, stored.status, stored.body);
  const kept = (JSON.parse(stored.body) as { mappingAnswer: { contentType?: string; body: string | null } }).mappingAnswer;
  answerMapping(ex, { status: stored.status, contentType: kept.contentType ?? DEFAULT_ANSWER_TYPE, ...(kept.body === null ? {} : { body: kept.body }) });
}
