import { HookError } from '../errors.js';
import { dropPrototypeKeys, isPrototypeKey } from '../engine/prototype-keys.js';
import type { Payload } from '../transform-types.js';
import { readsAsForm } from '../form-body.js';

const PROTO_WORD = /__proto__|constructor|prototype/;
/** A `\u` escape of a character from U+0040 to U+007F (every letter, and the underscore). */
const ASCII_ESCAPE = /\\u00[4-7]/;

/** Whether a body may hold a prototype key (JSON may spell one with escapes, which encoders never use for U+0040–U+007F). */
function mayHavePrototypeKey(text: string): boolean {
  return PROTO_WORD.test(text) || (text.includes('\\u00') && ASCII_ESCAPE.test(text));
}

// fatal: bytes that are not UTF-8 are refused rather than read as U+FFFD; a leading BOM is dropped.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A request body as a payload (CONTRACT.md §5): strict UTF-8, empty is `{}`, a form on a mapped hook
 * unless it starts with `{` (`curl -d @file.json`), else a JSON object — or on a mapped hook a
 * top-level array (§15); prototype keys dropped.
 */
export function parsePayload(bytes: Uint8Array, contentType: string | undefined, mappedHook: boolean): Payload {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new HookError('invalid_json', 'the body is not valid UTF-8');
  }
  let value: unknown;
  const trimmed = text.trim();
  if (trimmed === '') {
    value = {};
  } else if (mappedHook && readsAsForm(contentType, trimmed)) {
    value = parseForm(text);
  } else {
    try {
      value = JSON.parse(text);
    } catch {
      // V8's message quotes the body, and error bodies never carry payload text.
      throw new HookError('invalid_json', 'the body is not valid JSON');
    }
  }
  if (value === null || typeof value !== 'object' || (Array.isArray(value) && !mappedHook)) {
    throw new HookError('invalid_payload', mappedHook ? 'body: must be a JSON object or array' : 'body: must be a JSON object');
  }
  if (mayHavePrototypeKey(text)) dropPrototypeKeys(value);
  return value as Payload;
}

/** Form fields, a repeated one as a list; collected without a prototype, so `toString` finds no inherited value. */
function parseForm(text: string): Record<string, unknown> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of new URLSearchParams(text)) {
    if (!isPrototypeKey(k)) addField(fields, k, v);
  }
  return { ...fields };
}

/** Adds a form field's value: a repeated name's values become a list. */
export function addField(fields: Record<string, string | string[]>, name: string, value: string): void {
  const prev = fields[name];
  if (prev === undefined) fields[name] = value;
  else if (Array.isArray(prev)) prev.push(value);
  else fields[name] = [prev, value];
}
