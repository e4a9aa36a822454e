import { HookError } from '../errors.js';
import { dropPrototypeKeys, isPrototypeKey } from '../engine/prototype-keys.js';

/**
 * Quick test for the only keys that need stripping, so that the full walk runs only when one
 * may be there. JSON may spell a key with `\\uXXXX` escapes (`"\\u005f_proto__"` parses to an
 * own `__proto__`), so the test also fires on any escape of a character from U+0040 to U+007F:
 * every letter and the underscore of the three words lie there, and no sender needs to escape
 * them (JSON.stringify, Python's ensure_ascii and PHP's json_encode escape only controls and
 * non-ASCII), so an ordinary body, escaped non-ASCII text included, still skips the walk.
 */
const PROTO_WORD = /__proto__|constructor|prototype|\\u00[4-7]/;

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
  if (PROTO_WORD.test(text)) dropPrototypeKeys(value);
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
