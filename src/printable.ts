/** Outside text safe for a terminal or log line: control, bidi and line-separator characters escaped; cut at `max` with `…`. */
export function printable(text: string, max = Infinity): string {
  const capped = text.length > max ? `${text.slice(0, cutAt(text, max - 1))}…` : text;
  return UNPRINTABLE.test(capped) ? capped.replace(UNPRINTABLE_ALL, escape) : capped;
}

export const LOG_VALUE_MAX = 200;

export function logValue(text: string | undefined): string | undefined {
  return text === undefined ? undefined : printable(text, LOG_VALUE_MAX);
}

/** What JSON.stringify leaves raw but a terminal acts on, as `\uXXXX`: still valid JSON, parsing back to the same value. */
export function printableJson(value: unknown, indent?: number): string {
  return escapedBeyondC0(JSON.stringify(value, null, indent));
}

export function hasUnprintable(text: string): boolean {
  return UNPRINTABLE.test(text);
}

/** Only for text where every such character stands inside a JSON string or a YAML double-quoted scalar. */
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

/** `n`, or `n - 1` where the `n`th code unit starts a surrogate pair: never half a character. */
export function cutAt(text: string, n: number): number {
  const code = text.charCodeAt(n - 1);
  return code >= 0xd800 && code <= 0xdbff ? n - 1 : n;
}
