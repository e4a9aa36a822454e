/**
 * An answer a mapping gives its sender in place of the usual one (CONTRACT.md §12): what an
 * `action: respond` mapping answers, or a wake/agent mapping's rendered `response`. The engine
 * renders it, the listener writes it: it sits below both (STYLE.md #14).
 */
export interface MappingAnswer {
  status: number;
  /** Sent only with a body. */
  contentType: string;
  /** Absent: no body. */
  body?: string;
  /** Further headers (`respond.headers`), checked at load. */
  headers?: Readonly<Record<string, string>>;
}

/** The Content-Type of a mapping's answer when it names none. */
export const DEFAULT_ANSWER_TYPE = 'application/json';
