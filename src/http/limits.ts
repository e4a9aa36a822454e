/**
 * `limit` on the read endpoints (`GET {path}/events`, `GET {path}/runs`) and on `hookrelay
 * events` / `runs`: a default, and a maximum past which the request is refused like `limit=0`
 * (400 `invalid_payload` naming the maximum) — a silently shortened page would read like the
 * end of the list. Runs carry their replies, so a page of runs holds fewer.
 */
export const EVENTS_LIMIT = { default: 100, max: 1000 } as const;
export const RUNS_LIMIT = { default: 20, max: 200 } as const;

/**
 * An answer of `/events` carries at most about this many bytes of event text (and always at
 * least one event): `limit` alone let one request over large events build a 100 MB answer.
 * The client pages on with `after`, as it does past `limit`.
 */
export const EVENTS_MAX_BYTES = 1024 * 1024;
