/** `limit` on the reads (`{path}/events`, `{path}/runs`, the CLI's): past the maximum, 400 rather than a short page. */
export const EVENTS_LIMIT = { default: 100, max: 1000 } as const;
export const RUNS_LIMIT = { default: 20, max: 200 } as const;

/** Event text per `/events` answer, about (always at least one event): the client pages on with `after`. */
export const EVENTS_MAX_BYTES = 1024 * 1024;
