import type { OutgoingHttpHeaders } from 'node:http';
import { DEFAULT_ANSWER_TYPE, type MappingAnswer } from '../mapping-answer.js';
import { answer } from './answer.js';
import type { Exchange } from './exchange.js';

/*
 * A mapping's own answer (CONTRACT.md §12) on the wire, and as an idempotency key keeps it: in an
 * envelope no usual answer (`{"ok":…`) can begin with, so a repeat gets its type and body too.
 */

const ENVELOPE = '{"mappingAnswer":';

/**
 * A mapping's body may echo what a request sent, on the console's origin: `sandbox` and
 * `default-src 'none'` keep a browser from running it as a page of that origin.
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
