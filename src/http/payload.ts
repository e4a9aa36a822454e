import { HookError } from '../errors.js';
import { dropPrototypeKeys } from '../engine/prototype-keys.js';

/** Quick test for the only keys that need stripping (a full walk only when one may be there). */
const PROTO_WORD = /__proto__|constructor|prototype/;

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

/** Form fields as an object; a repeated field becomes a list. */
function parseForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}
