import type { OutgoingHttpHeaders } from 'node:http';
import { DEFAULT_ANSWER_TYPE, type MappingAnswer } from '../mapping-answer.js';
import { answer } from './answer.js';
import type { Exchange } from './exchange.js';

/*
 * A mapping's own answer (CONTRACT.md §12) on the wire, and as an idempotency key keeps it.
 * The store keeps a key's first answer as a status and a text body (store/sql/idempotency.ts),
 * which the listener's usual answers fill with their JSON — always an object beginning
 * `{"ok":`. A mapping's answer has a content type of its own, and may have no body: it is kept
 * in an envelope that no usual answer can begin with, so that a repeat gets exactly the first
 * answer (its type and body) without a column more in either store.
 */

const ENVELOPE = '{"mappingAnswer":';

/**
 * A mapping's body may echo what a request sent (a challenge, a field) under a type the
 * operator chose, on the origin the console lives on: a browser must never run it as a page
 * of that origin (a reflected script could reach the console with its session). `sandbox`
 * gives such a document an opaque origin and `default-src 'none'` lets it load nothing; no
 * webhook sender reads either. A mapping's own `respond.headers` may still set them otherwise.
 */
const CONTAINED: Readonly<OutgoingHttpHeaders> = Object.freeze({
  'content-security-policy': "default-src 'none'; sandbox",
  'x-content-type-options': 'nosniff',
});

/** Writes a mapping's answer: its status, its headers, and its body with its content type (a bodiless status gets neither). */
export function answerMapping(ex: Exchange, a: MappingAnswer): void {
  const headers: OutgoingHttpHeaders = { ...CONTAINED, ...a.headers };
  const body = a.body === undefined || a.status === 204 || a.status === 205 || a.status === 304 ? undefined : a.body;
  if (body !== undefined) {
    headers['content-type'] = a.contentType;
    headers['content-length'] = String(Buffer.byteLength(body));
  } else if (a.status !== 204 && a.status !== 304) {
    headers['content-length'] = '0';
  }
  answer(ex, a.status, headers, body);
}

/** The text an idempotency key keeps for a mapping's answer. */
export function storedMappingAnswer(a: MappingAnswer): string {
  return `${ENVELOPE}${JSON.stringify({ contentType: a.contentType, body: a.body ?? null })}}`;
}

/** The mapping answer an idempotency key kept, or undefined when it kept a usual answer. */
export function fromStored(status: number, body: string): MappingAnswer | undefined {
  if (!body.startsWith(ENVELOPE)) return undefined;
  const kept = (JSON.parse(body) as { mappingAnswer: { contentType?: string; body: string | null } }).mappingAnswer;
  return { status, contentType: kept.contentType ?? DEFAULT_ANSWER_TYPE, ...(kept.body === null ? {} : { body: kept.body }) };
}
