/** Why each mapping on a path did or did not take a request (CONTRACT.md §16): engine/explain.ts makes it; the request log, the console and the CLI show it. */

/** One mapping's verdict: matched (`first`: the one that took it), or the first condition that failed. */
export type Verdict =
  | { mapping: string; matched: true; first: boolean }
  | { mapping: string; failed: 'method' | 'source'; want: string }
  | { mapping: string; failed: 'header'; header: string }
  /** `error`: the `when` threw (counted as not matching); its message only for the author's own tools. */
  | { mapping: string; failed: 'when'; error?: { code: string; message?: string } };

/** Every mapping that takes `{path}/NAME`, in match order, with its verdict. */
export interface Explanation {
  /** How many mappings take this path (what a 404 tells the sender, and no more). */
  mappings: number;
  verdicts: Verdict[];
}

/** At most this many verdicts are kept in a request-log row: a path of thousands of mappings stays a short row. */
export const KEPT_VERDICTS = 50;

/** The explanation as the request log keeps it: no `when` error message (it may quote the payload), at most {@link KEPT_VERDICTS} verdicts. */
export function keptExplanation(e: Explanation): Explanation {
  const verdicts = e.verdicts.slice(0, KEPT_VERDICTS).map((v) => ('error' in v && v.error ? { ...v, error: { code: v.error.code } } : v));
  return { mappings: e.mappings, verdicts };
}

/** One verdict as a line of text: `push: header x-github-event (missing or another value)`. */
export function verdictText(v: Verdict, firstId?: string): string {
  if ('matched' in v) return `${v.mapping}: matched${v.first ? '' : ` too, but "${firstId ?? 'an earlier mapping'}" comes first`}`;
  switch (v.failed) {
    case 'method':
      return `${v.mapping}: method (it takes ${v.want})`;
    case 'source':
      return `${v.mapping}: source (it wants payload.source ${JSON.stringify(v.want)})`;
    case 'header':
      return `${v.mapping}: header ${v.header} (missing or another value)`;
    case 'when':
      return `${v.mapping}: when ${v.error ? `failed (${v.error.code}${v.error.message ? `: ${v.error.message}` : ''}; counted as not matching)` : 'was false'}`;
  }
}

/** Every verdict as lines, the first matched one named in the later ones that match too. */
export function explanationLines(e: Explanation): string[] {
  const first = e.verdicts.find((v) => 'matched' in v && v.first)?.mapping;
  const more = e.mappings - e.verdicts.length;
  return [...e.verdicts.map((v) => verdictText(v, first)), ...(more > 0 ? [`… and ${more} more`] : [])];
}
