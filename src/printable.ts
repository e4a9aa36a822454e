/**
 * Text that came from outside (a payload, a session key, a stored event) made safe to show on
 * a terminal or in a log line: every control character (C0, DEL, C1) and the invisible
 * characters that reorder or split what is shown (bidi controls, line and paragraph
 * separators) is written as an escape — `\n`, `\x1b`, `\u202e` — so it can neither move the
 * cursor, recolour the terminal nor forge a second log line; text longer than `max`
 * characters is cut and ends with `…`.
 */
export function printable(text: string, max = Infinity): string {
  const capped = text.length > max ? `${text.slice(0, cutAt(text, max - 1))}…` : text;
  return UNPRINTABLE.test(capped) ? capped.replace(UNPRINTABLE_ALL, escape) : capped;
}

/** Request-derived values in log lines are cut at this many characters. */
export const LOG_VALUE_MAX = 200;

/** {@link printable} with the log cap: for values that came with a request. */
export function logValue(text: string | undefined): string | undefined {
  return text === undefined ? undefined : printable(text, LOG_VALUE_MAX);
}

/**
 * `value` as JSON for a terminal or a pipe: what JSON.stringify leaves raw but a terminal acts
 * on (DEL and C1 controls, line and paragraph separators, bidi controls) written as `\uXXXX`,
 * which inside a JSON string means the same character — the line stays valid JSON and parses
 * back to the same value. (C0 controls JSON.stringify escapes itself.)
 */
export function printableJson(value: unknown, indent?: number): string {
  return escapedBeyondC0(JSON.stringify(value, null, indent));
}

/** Whether {@link printable} would escape anything in `text`. */
export function hasUnprintable(text: string): boolean {
  return UNPRINTABLE.test(text);
}

/**
 * `text` with DEL and C1 controls, line and paragraph separators and bidi controls written as
 * `\uXXXX`: the escape a JSON string and a YAML double-quoted scalar both read back as that
 * character. Only for text where every such character stands inside one of those strings.
 */
export function escapedBeyondC0(text: string): string {
  return text.replace(BEYOND_C0_ALL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// C0 controls, and what else a terminal acts on: DEL and C1, bidi controls, line separators.
const BEYOND_C0 = '\\u007f-\\u009f\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`);
const UNPRINTABLE_ALL = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g');
// In JSON text a raw C0 character can only be indentation: JSON.stringify escapes them in strings.
const BEYOND_C0_ALL = new RegExp(`[${BEYOND_C0}]`, 'g');
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escape(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `n`, moved back by one when it would split a surrogate pair. */
function cutAt(text: string, n: number): number {
  const code = text.charCodeAt(n - 1);
  return code >= 0xd800 && code <= 0xdbff ? n - 1 : n;
}
