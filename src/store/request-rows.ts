import type { Bind } from './rows.js';
import type { NewRequestLog, RequestRecord } from './records.js';

/** The request log's rows (CONTRACT.md §11), the same table and encodings in both backends; action ids space-separated (uuids hold no space). */

export interface RequestRow {
  seq: number;
  at: string;
  request_id: string | null;
  method: string;
  path: string;
  route: string;
  status: number;
  ms: number;
  event_ids: string | null;
  run_ids: string | null;
  replayed: number;
  error: string | null;
  content_type: string | null;
  user_agent: string | null;
  body?: string | null;
  body_until: string | null;
  replay_of: number | null;
  sender: string | null;
  /** JSON `{"headers":{…},"query":"…"}`: kept with the body, purged with it. */
  head?: string | null;
}

/** The columns a request-log INSERT binds, in order. */
export const REQUEST_COLUMNS =
  'at, request_id, method, path, route, status, ms, event_ids, run_ids, replayed, error, content_type, user_agent, body, body_until, replay_of, sender, head';

/** Every column but the body: what a listing reads. */
export const REQUEST_LIST_COLUMNS =
  'seq, at, request_id, method, path, route, status, ms, event_ids, run_ids, replayed, error, content_type, user_agent, body_until, replay_of, sender';

export function requestValues(r: NewRequestLog): Bind[] {
  return [
    r.at, r.requestId ?? null, r.method, r.path, r.route, r.status, r.ms,
    r.eventIds.length ? r.eventIds.join(' ') : null, r.runIds.length ? r.runIds.join(' ') : null,
    r.replayed ? 1 : 0, r.error ?? null, r.contentType ?? null, r.userAgent ?? null,
    r.body ?? null, r.body === undefined ? null : r.bodyUntil ?? null, r.replayOf ?? null,
    r.sender ?? null, headOf(r),
  ];
}

/** A row's kept headers and query as one JSON text, only beside a kept body. */
function headOf(r: NewRequestLog): string | null {
  if (r.body === undefined || (r.headers === undefined && r.query === undefined)) return null;
  return JSON.stringify({ headers: r.headers ?? {}, query: r.query ?? '' });
}

/** Row → record, NULL columns left out. */
export function toRequest(row: RequestRow): RequestRecord {
  const r: RequestRecord = {
    seq: row.seq,
    at: row.at,
    method: row.method,
    path: row.path,
    route: row.route,
    status: row.status,
    ms: row.ms,
    eventIds: row.event_ids ? row.event_ids.split(' ') : [],
    runIds: row.run_ids ? row.run_ids.split(' ') : [],
    replayed: row.replayed === 1,
  };
  if (row.request_id !== null) r.requestId = row.request_id;
  if (row.error !== null) r.error = row.error;
  if (row.content_type !== null) r.contentType = row.content_type;
  if (row.user_agent !== null) r.userAgent = row.user_agent;
  if (row.body != null) r.body = row.body;
  if (row.body_until !== null) r.bodyUntil = row.body_until;
  if (row.replay_of !== null) r.replayOf = row.replay_of;
  if (row.sender != null) r.sender = row.sender;
  if (row.head != null) {
    const head = JSON.parse(row.head) as { headers: Record<string, string>; query: string };
    r.headers = head.headers;
    if (head.query !== '') r.query = head.query;
  }
  return r;
}
