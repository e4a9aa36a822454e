import type {
  DeliveryRecord, DeliveryStatus, EventKind, EventRecord, Forwarded, NewCallback, NewDelivery, NewEvent, NewForward, NewKey, NewRequestLog, NewRun, RequestRecord, RunRecord, RunStatus,
} from './records.js';

/** The one mapping between rows and records: both schemas use the same tables, columns and encodings (booleans 0/1, ISO times, JSON payloads), so `hookrelay store copy` moves a row as it is. */

export interface EventRow {
  seq: number;
  id: string;
  kind: string;
  text: string;
  source: string;
  at: string;
  unsafe: number;
}

export interface RunRow {
  seq: number;
  run_id: string;
  session_key: string;
  status: string;
  message: string;
  name: string | null;
  model: string | null;
  thinking: string | null;
  timeout_seconds: number | null;
  wake_mode: string;
  deliver: number;
  provider: string;
  recipient: string | null;
  source: string;
  unsafe: number;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  reply: string | null;
  error: string | null;
  delivered_to: string | null;
  error_code: string | null;
  forwarded: string | null;
  session_mode: string | null;
  d_status?: string | null;
  d_target?: string | null;
  d_attempts?: number | null;
  d_error?: string | null;
  callback_url?: string | null;
  c_status?: string | null;
  c_attempts?: number | null;
  c_error?: string | null;
}

export interface OutboxRow {
  id: number;
  kind: string;
  run_id: string | null;
  target: string;
  payload: string;
  parts: number;
  parts_sent: number;
  status: string;
  attempts: number;
  next_at: string;
  error: string | null;
  created_at: string;
}

export type Bind = string | number | null;


export const EVENT_COLUMNS = 'id, kind, text, source, at, unsafe';

export function eventValues(e: NewEvent): Bind[] {
  return [e.id, e.kind, e.text, e.source, e.at, e.unsafe ? 1 : 0];
}

export const RUN_COLUMNS =
  'run_id, session_key, message, name, model, thinking, timeout_seconds, wake_mode, deliver, provider, recipient, source, unsafe, created_at, callback_url, session_mode';

export function runValues(r: NewRun): Bind[] {
  return [
    r.runId,
    r.sessionKey,
    r.message,
    r.name ?? null,
    r.model ?? null,
    r.thinking ?? null,
    r.timeoutSeconds ?? null,
    r.wakeMode,
    r.deliver ? 1 : 0,
    r.provider,
    r.to ?? null,
    r.source,
    r.unsafe ? 1 : 0,
    r.createdAt,
    r.callbackUrl ?? null,
    r.sessionMode ?? null,
  ];
}

export const KEY_COLUMNS = 'key, request_hash, status, body, at';

export function keyValues(k: NewKey): Bind[] {
  return [k.key, k.requestHash, k.status, k.body, k.at];
}

/** What an event weighs against a `listEvents` byte budget: the UTF-8 size of its strings. */
export function eventBytes(row: EventRow): number {
  return Buffer.byteLength(row.text) + Buffer.byteLength(row.source) + row.id.length + row.kind.length + row.at.length;
}

export function toEvent(row: EventRow): EventRecord {
  return {
    seq: row.seq,
    id: row.id,
    kind: row.kind as EventKind,
    text: row.text,
    source: row.source,
    at: row.at,
    unsafe: row.unsafe === 1,
  };
}

/** Row → record: camelCase, NULL columns left out rather than set to undefined. */
export function toRun(row: RunRow): RunRecord {
  const run: RunRecord = {
    runId: row.run_id,
    sessionKey: row.session_key,
    status: row.status as RunStatus,
    message: row.message,
    wakeMode: row.wake_mode as RunRecord['wakeMode'],
    deliver: row.deliver === 1,
    provider: row.provider as RunRecord['provider'],
    source: row.source,
    unsafe: row.unsafe === 1,
    createdAt: row.created_at,
  };
  if (row.name !== null) run.name = row.name;
  if (row.model !== null) run.model = row.model;
  if (row.thinking !== null) run.thinking = row.thinking as RunRecord['thinking'];
  if (row.timeout_seconds !== null) run.timeoutSeconds = row.timeout_seconds;
  if (row.recipient !== null) run.to = row.recipient;
  if (row.started_at !== null) run.startedAt = row.started_at;
  if (row.ended_at !== null) run.endedAt = row.ended_at;
  if (row.reply !== null) run.reply = row.reply;
  if (row.error !== null) run.error = row.error;
  if (row.error_code !== null) run.errorCode = row.error_code as RunRecord['errorCode'];
  if (row.delivered_to !== null) run.deliveredTo = row.delivered_to;
  if (row.forwarded !== null) run.forwarded = JSON.parse(row.forwarded) as Forwarded;
  if (row.session_mode != null) run.sessionMode = row.session_mode as RunRecord['sessionMode'];
  if (row.d_status != null) {
    run.delivery = { status: row.d_status as DeliveryStatus, target: row.d_target!, attempts: row.d_attempts! };
    if (row.d_error != null) run.delivery.error = row.d_error;
  }
  if (row.callback_url != null) run.callbackUrl = row.callback_url;
  if (row.c_status != null) {
    run.callback = { status: row.c_status as DeliveryStatus, attempts: row.c_attempts! };
    if (row.c_error != null) run.callback.error = row.c_error;
  }
  return run;
}

interface ReplyPayload {
  provider: NewDelivery['provider'];
  to: string;
  parts: string[];
}

type ForwardPayload = Pick<NewForward, 'path' | 'key' | 'body'>;

export const OUTBOX_COLUMNS = 'kind, run_id, target, payload, parts, next_at, created_at';

export function outboxValues(d: NewDelivery, runId: string | null): Bind[] {
  const payload: ReplyPayload = { provider: d.provider, to: d.to, parts: d.parts };
  return [d.kind, runId, `${d.provider}:${d.to}`, JSON.stringify(payload), d.parts.length, d.createdAt, d.createdAt];
}

export function forwardValues(f: NewForward): Bind[] {
  const payload: ForwardPayload = { path: f.path, key: f.key, body: f.body };
  return [f.kind, f.path === 'agent' ? f.key : null, `forward:${f.path}`, JSON.stringify(payload), 1, f.createdAt, f.createdAt];
}

type CallbackPayload = Pick<NewCallback, 'url' | 'body'>;

export function callbackValues(c: NewCallback, runId: string): Bind[] {
  const payload: CallbackPayload = { url: c.url, body: c.body };
  return [c.kind, runId, `callback:${new URL(c.url).host}`, JSON.stringify(payload), 1, c.createdAt, c.createdAt];
}

export function toDelivery(row: OutboxRow): DeliveryRecord {
  const state = {
    id: row.id,
    target: row.target,
    partsSent: row.parts_sent,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAt: row.next_at,
    createdAt: row.created_at,
  };
  let d: DeliveryRecord;
  if (row.kind === 'forward') {
    const p = JSON.parse(row.payload) as ForwardPayload;
    d = { kind: 'forward', path: p.path, key: p.key, parts: [p.body], ...state };
  } else if (row.kind === 'callback') {
    const p = JSON.parse(row.payload) as CallbackPayload;
    d = { kind: 'callback', url: p.url, parts: [p.body], ...state };
  } else {
    const p = JSON.parse(row.payload) as ReplyPayload;
    d = { kind: row.kind as NewDelivery['kind'], provider: p.provider, to: p.to, parts: p.parts, ...state };
  }
  if (row.run_id !== null) d.runId = row.run_id;
  if (row.error !== null) d.error = row.error;
  return d;
}

/** The request log's rows (CONTRACT.md §11): action ids space-separated (uuids hold no space). */
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
