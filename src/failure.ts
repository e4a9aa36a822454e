/**
 * Why a mapping's template, `match.when` or transform failed on a request, as the log, the request
 * log, the console and `hookrelay test` show it (CONTRACT.md §16). Made by engine/failure.ts, which
 * leaves out payload data when it makes one for the listener.
 */
export interface MappingFailure {
  mappingId: string;
  /** What failed: a template field (`textTemplate`, `respond.body`, …), `match.when` or `transform`. */
  step: string;
  /** The cause's own code: JSONata's (`T2001`), a guardrail's (`too_many_steps`), `handlebars`, or a transform's error name (`TypeError`). */
  code: string;
  message: string;
  /** JSONata: the character offset in the expression where evaluation stopped. */
  position?: number;
  /** Handlebars: the line and column (from 1) of the mustache or block that failed. */
  line?: number;
  column?: number;
}

/** `T2001: The left side … (position 14)`: the code, the message and where. */
export function causeText(f: Pick<MappingFailure, 'code' | 'message' | 'position' | 'line' | 'column'>): string {
  const at = f.line !== undefined ? ` (line ${f.line}, column ${f.column})` : f.position !== undefined ? ` (position ${f.position})` : '';
  return `${f.code}: ${f.message}${at}`;
}

/** `mapping "x": textTemplate failed: T2001: …`. */
export function failureText(f: MappingFailure): string {
  return `mapping "${f.mappingId}": ${f.step} failed: ${causeText(f)}`;
}

/** A failure's fields of a log line, besides the line's own `code`. */
export function failureFields(f: MappingFailure): Record<string, unknown> {
  const { mappingId, code: _code, ...rest } = f;
  return { mapping: mappingId, ...rest };
}
