/** The console's one escaping rule: every value in {@link html} is escaped, unless it is `html`'s own output. */
export class Html {
  constructor(readonly text: string) {}
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const SPECIAL = /[&<>"']/g;

/** Escapes text for an HTML text node or a quoted attribute value. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(SPECIAL, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | undefined | null | readonly Part[];

/** Tagged template: `html\`<td>${text}</td>\``; arrays are joined, `undefined`/`null`/`false` render as nothing. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

function render(value: Part): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return esc(value);
}
