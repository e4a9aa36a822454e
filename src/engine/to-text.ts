/**
 * How any template value becomes text (CONTRACT.md §6): strings as they are, numbers and
 * booleans through `String`, objects and arrays as JSON, null and undefined as ''.
 * Shared by the Handlebars and JSONata engines so both render alike.
 */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value) ?? '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return '';
}
