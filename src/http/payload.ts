import { HookError } from '../errors.js';
import { dropPrototypeKeys, isPrototypeKey } from '../engine/prototype-keys.js';

/** The three words, as they are spelled without escapes. */
const PROTO_WORD = /__proto__|constructor|prototype/;
/** A `\u` escape of a character from U+0040 to U+007F (every letter, and the underscore). */
const ASCII_ESCAPE = /\\u00[4-7]/;

/**
 * Quick test for the only keys that need stripping, so that the full walk runs only when one
 * may be there. JSON may spell a key with escapes (`"\u005f_proto__"` parses to an own
 * `__proto__`: issue 30), and every character of the three words lies in U+0040–U+007F, which
 * encoders do not escape (JSON.stringify, Python's ensure_ascii and PHP's json_encode escape
 * controls, a few symbols below U+0040 and non-ASCII; DEL, U+007F, only makes a needless walk),
 * so an ordinary body still skips the walk.
 * `includes` first: a body without any `\u00` (most of them) pays a plain substring search,
 * not a second regular expression (measured in the commit that brought it).
 */
function mayHavePrototypeKey(text: string): boolean {
  return PROTO_WORD.test(text) || (text.includes('\\u00') && ASCII_ESCAPE.test(text));
}

// fatal: a byte sequence that is not UTF-8 is refused rather than read as U+FFFD, so that
// what a template sees is what the sender sent. A leading BOM is dropped (ignoreBOM false).
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How the bytes of a request body become a payload (CONTRACT.md §5), shared by the listener
 * and `hookrelay test`, so that a dry run reads a payload file exactly as the listener would
 * read the same bytes:
 *
 * - strict UTF-8 (else 400 `invalid_json`);
 * - an empty or blank body is `{}`;
 * - `application/x-www-form-urlencoded` on a mapped hook is form data (a repeated field
 *   becomes a list) — unless the text starts with `{`: `curl -d @push.json` sends a JSON file
 *   with that type, and form data never starts with `{`, so such a body is read as JSON;
 * - anything else is JSON whatever the Content-Type;
 * - the result must be an object (400 `invalid_payload`), and loses its own `__proto__`,
 *   `constructor` and `prototype` keys at every depth.
 *
 * Error messages never quote the body.
 */
export function parsePayload(bytes: Uint8Array, contentType: string | undefined, mappedHook: boolean): Record<string, unknown> {
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
  } else if (mappedHook && isForm(contentType) && !trimmed.startsWith('{')) {
    value = parseForm(text);
  } else {
    try {
      value = JSON.parse(text);
    } catch {
      // V8's message quotes the body, and error bodies never carry payload text.
      throw new HookError('invalid_json', 'the body is not valid JSON');
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HookError('invalid_payload', 'body: must be a JSON object');
  }
  if (mayHavePrototypeKey(text)) dropPrototypeKeys(value);
  return value as Record<string, unknown>;
}

function isForm(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.trimStart().toLowerCase().startsWith('application/x-www-form-urlencoded');
}

/**
 * Form fields as an object; a repeated field becomes a list. Collected on a null-prototype
 * object, so that a field named like an inherited member (`toString`, `valueOf`…) finds no
 * earlier value (on `{}` it found the inherited function and became `[<function>, value]`,
 * which no worker can take); the prototype keys are skipped, however they were percent-encoded
 * (URLSearchParams has decoded them). The result is copied to a plain object, like what
 * JSON.parse returns, so that the two kinds of payload behave alike downstream.
 */
function parseForm(text: string): Record<string, unknown> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of new URLSearchParams(text)) {
    if (isPrototypeKey(k)) continue;
    const prev = fields[k];
    if (prev === undefined) fields[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else fields[k] = [prev, v];
  }
  return { ...fields };
}
