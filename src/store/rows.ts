import type { MappingFailure } from '../failure.js';
import type {
  DeliveryRecord, DeliveryStatus, EventKind, EventRecord, Forwarded, NewCallback, NewDelivery, NewEvent, NewForward, NewKey, NewRequestLog, NewRun, RequestRecord,
  RunCallback, RunDelivery, RunRecord,
} from './records.js';

/** The one mapping between rows and records: both schemas use the same tables, columns and encodings (booleans 0/1, ISO times but an event's in ms since the epoch, JSON payloads), so `hookrelay store copy` moves a row as it is. */

export interface EventRow {
  seq: number;
  id: string;
  kind: string;
  text: string;
  source: string;
  at: number;
  unsafe: number;
}

/** A row as the driver returns it: columns by name, booleans 0/1, NULL where nothing is stored. */
export type Row = Record<string, Bind | undefined>;

/** A run's row: the runs table, with its delivery's (`d_…`) and callback's (`c_…`) outbox columns where joined. */
export type RunRow = Row & { seq: number };

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
  const at = Date.parse(e.at);
  return [e.id, e.kind, e.text, e.source, Number.isNaN(at) ? null : at, e.unsafe ? 1 : 0];
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
export function eventBytes(e: EventRecord): number {
  return Buffer.byteLength(e.text) + Buffer.byteLength(e.source) + e.id.length + e.kind.length + e.at.length;
}

export function toEvent(row: EventRow): EventRecord {
  const { seq, id, kind, text, source } = row;
  return { seq, id, kind: kind as EventKind, text, source, at: new Date(row.at).toISOString(), unsafe: row.unsafe === 1 };
}

/** Where each field of a record `T` comes from: its column, or what it is made of its row. */
type Fields<R extends Row, T> = { [K in keyof T]-?: string | ((row: R) => T[K] | undefined) };

/** Row → record: each field in the record's key order, those from NULL columns (or made undefined) left out. */
function fromRow<T, R extends Row = Row>(row: R, fields: Fields<R, T>): T {
  const record: Record<string, unknown> = {};
  for (const [field, from] of Object.entries<string | ((row: R) => unknown)>(fields)) {
    const value = typeof from === 'string' ? row[from] : from(row);
    if (value != null) record[field] = value;
  }
  return record as T;
}

const RUN_FIELDS: Fields<RunRow, RunRecord> = {
  runId: 'run_id',
  sessionKey: 'session_key',
  status: 'status',
  message: 'message',
  wakeMode: 'wake_mode',
  deliver: (r) => r.deliver === 1,
  provider: 'provider',
  source: 'source',
  unsafe: (r) => r.unsafe === 1,
  createdAt: 'created_at',
  name: 'name',
  model: 'model',
  thinking: 'thinking',
  timeoutSeconds: 'timeout_seconds',
  to: 'recipient',
  startedAt: 'started_at',
  endedAt: 'ended_at',
  reply: 'reply',
  error: 'error',
  errorCode: 'error_code',
  deliveredTo: 'delivered_to',
  forwarded: (r) => (r.forwarded == null ? undefined : (JSON.parse(String(r.forwarded)) as Forwarded)),
  sessionMode: 'session_mode',
  delivery: (r) => (r.d_status == null ? undefined : fromRow<RunDelivery>(r, { status: 'd_status', target: 'd_target', attempts: 'd_attempts', error: 'd_error' })),
  callbackUrl: 'callback_url',
  callback: (r) => (r.c_status == null ? undefined : fromRow<RunCallback>(r, { status: 'c_status', attempts: 'c_attempts', error: 'c_error' })),
};

export function toRun(row: RunRow): RunRecord {
  return fromRow(row, RUN_FIELDS);
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

/** A request-log row (CONTRACT.md §11): action ids space-separated (uuids hold no space); `head`, JSON `{"headers":{…},"query":"…"}`, kept and purged with the body; `req_lag` set: a folded row, `at` its event's ms or its run's time. */
export type RequestRow = Row & { head?: string | null; failures?: string | null; req_lag?: number | null };

/** An accepted request's row on its one event or run (sql/requests.ts): time as ms before theirs, ms in tenths, method NULL for POST, content type NULL for JSON ('' for none). */
export const FOLD_COLUMNS = 'req_lag, req_route, req_status, req_ms, req_method, req_path, req_id, req_type, req_ua, req_sender';
const FOLD_WIDTH = FOLD_COLUMNS.split(',').length;
const FOLD_NONE: Bind[] = Array<Bind>(FOLD_WIDTH).fill(null);
const JSON_TYPE = 'application/json';
const MAX_INT32 = 2 ** 31 - 1;

/** `t` in ms when it is exactly what toISOString gives for them (its lag then reads back the same), else NaN. */
function isoMs(t: string): number {
  const ms = Date.parse(t);
  return Number.isNaN(ms) || new Date(ms).toISOString() !== t ? NaN : ms;
}

/** The accepted rows of one event or run, with `r` folded into them when it reads back the same; else undefined. */
export function foldedRow(r: NewRequestLog, events: readonly NewEvent[], runs: readonly NewRun[]): { into: 'events' | 'runs'; values: Bind[] } | undefined {
  const [into, id, at] = events.length === 1 && runs.length === 0 && !events[0]!.held ? ['events', events[0]!.id, events[0]!.at] as const
    : runs.length === 1 && events.length === 0 ? ['runs', runs[0]!.runId, runs[0]!.createdAt] as const : [];
  if (into === undefined) return undefined;
  const ids = into === 'events' ? r.eventIds : r.runIds;
  const others = into === 'events' ? r.runIds : r.eventIds;
  const tenths = Math.round(r.ms * 10);
  // What only a `requests` row holds (a body, an error, a replay, why nothing matched, failures) keeps one.
  if (r.body !== undefined || r.replayed || r.error !== undefined || r.replayOf !== undefined || r.explanation !== undefined || r.failures?.length) return undefined;
  if (ids.length !== 1 || ids[0] !== id || others.length !== 0 || r.status < 200 || r.status > 299) return undefined;
  // NaN when either time is not in toISOString's form: the test below refuses it too.
  const lag = isoMs(at) - isoMs(r.at);
  if (tenths / 10 !== r.ms || tenths > MAX_INT32 || !(Math.abs(lag) <= MAX_INT32)) return undefined;
  const fold: Bind[] = [lag, r.route, r.status, tenths, r.method === 'POST' ? null : r.method, r.path, r.requestId ?? null,
    r.contentType === JSON_TYPE ? null : r.contentType ?? '', r.userAgent ?? null, r.sender ?? null];
  return { into, values: [...(into === 'events' ? eventValues(events[0]!) : runValues(runs[0]!)), ...fold] };
}

export const unfolded = (values: Bind[]): Bind[] => [...values, ...FOLD_NONE];

function unfold(row: RequestRow): RequestRow {
  return {
    ...row,
    at: new Date((row.event_ids == null ? Date.parse(String(row.at)) : Number(row.at)) - row.req_lag!).toISOString(),
    method: row.method ?? 'POST',
    ms: Number(row.ms) / 10,
    content_type: row.content_type == null ? JSON_TYPE : row.content_type === '' ? null : row.content_type,
  };
}

/** The columns a request-log INSERT binds, in order. */
export const REQUEST_COLUMNS =
  'at, request_id, method, path, route, status, ms, event_ids, run_ids, replayed, error, content_type, user_agent, body, body_until, replay_of, sender, head, explain, failures';

/** Every column but the body: what a listing reads. */
export const REQUEST_LIST_COLUMNS =
  'seq, at, request_id, method, path, route, status, ms, event_ids, run_ids, replayed, error, content_type, user_agent, body_until, replay_of, sender, explain, failures';

export function requestValues(r: NewRequestLog): Bind[] {
  return [
    r.at, r.requestId ?? null, r.method, r.path, r.route, r.status, r.ms,
    r.eventIds.length ? r.eventIds.join(' ') : null, r.runIds.length ? r.runIds.join(' ') : null,
    r.replayed ? 1 : 0, r.error ?? null, r.contentType ?? null, r.userAgent ?? null,
    r.body ?? null, r.body === undefined ? null : r.bodyUntil ?? null, r.replayOf ?? null,
    r.sender ?? null, headOf(r), r.explanation === undefined ? null : JSON.stringify(r.explanation), r.failures?.length ? JSON.stringify(r.failures) : null,
  ];
}

/** A row's kept headers and query as one JSON text, only beside a kept body. */
function headOf(r: NewRequestLog): string | null {
  if (r.body === undefined || (r.headers === undefined && r.query === undefined)) return null;
  return JSON.stringify({ headers: r.headers ?? {}, query: r.query ?? '' });
}

const ids = (column: Bind | undefined) => (column ? String(column).split(' ') : []);

const REQUEST_FIELDS: Fields<RequestRow, Omit<RequestRecord, 'headers' | 'query' | 'failures'>> = {
  seq: 'seq',
  at: 'at',
  method: 'method',
  path: 'path',
  route: 'route',
  status: 'status',
  ms: 'ms',
  eventIds: (r) => ids(r.event_ids),
  runIds: (r) => ids(r.run_ids),
  replayed: (r) => r.replayed === 1,
  requestId: 'request_id',
  error: 'error',
  contentType: 'content_type',
  userAgent: 'user_agent',
  body: 'body',
  bodyUntil: 'body_until',
  replayOf: 'replay_of',
  sender: 'sender',
  explanation: (r) => (r.explain == null ? undefined : JSON.parse(String(r.explain))),
};

export function toRequest(stored: RequestRow): RequestRecord {
  const row = stored.req_lag == null ? stored : unfold(stored);
  const r: RequestRecord = fromRow(row, REQUEST_FIELDS);
  if (row.failures != null) r.failures = JSON.parse(row.failures) as MappingFailure[];
  if (row.head != null) {
    const head = JSON.parse(row.head) as { headers: Record<string, string>; query: string };
    r.headers = head.headers;
    if (head.query !== '') r.query = head.query;
  }
  return r;
}
