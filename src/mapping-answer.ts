/** A mapping's own answer (CONTRACT.md §12): the engine renders it, the listener writes it (STYLE.md #14). */
export interface MappingAnswer {
  status: number;
  /** Sent only with a body. */
  contentType: string;
  /** Absent: no body. */
  body?: string;
  headers?: Readonly<Record<string, string>>;
}

export const DEFAULT_ANSWER_TYPE = 'application/json';
