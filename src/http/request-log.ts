import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Accepted } from '../dispatch/runtime.js';
import type { ErrorCode } from '../errors.js';
import { printable } from '../printable.js';
import type { RequestLogBuffer } from '../store/request-log.js';
import type { NewRequestLog, Store } from '../store/store.js';
import { REPLAYED_HEADER } from './idempotency.js';
import { routeLabel } from './route-label.js';

/**
 * The listener's side of the request log (CONTRACT.md §11; the store's side is
 * store/request-log.ts): which requests get a row, and the row. A request under the hooks path
 * (`/metrics` aside) gets one when it is answered, whoever answered it — the gate's refusals
 * too. An accepted request's row is made by its route just before the commit and committed
 * with its accept (routes.ts); every other row is made when the response closes
 * (access-log.ts) and buffered.
 *
 * What a row never holds: the query (it may carry the token), header values other than
 * Content-Type and User-Agent (capped, control characters escaped), signatures, secrets. The
 * body only under `hooks.keepBodies`.
 *
 * The marks below are symbol properties on the request and response, set by the layer that
 * knows each fact, so that nothing is computed twice and nothing is allocated for a request
 * until its row is made.
 */
const HOOKS = Symbol('hookrelay.log.hooks');
const PATH = Symbol('hookrelay.log.path');
const ERROR = Symbol('hookrelay.log.error');
const COMMITTED = Symbol('hookrelay.log.committed');
const RAW = Symbol('hookrelay.log.raw');
const REPLAY_OF = Symbol('hookrelay.log.replayOf');
/** When the request began (performance.now()) and its X-Request-Id: set by access-log.ts. */
export const START = Symbol('hookrelay.start');
export const REQUEST_ID = Symbol('hookrelay.requestId');

type Marked = ServerResponse & {
  [HOOKS]?: number; [PATH]?: string; [ERROR]?: string; [COMMITTED]?: true; [START]?: number; [REQUEST_ID]?: string;
};
type MarkedRequest = IncomingMessage & { [RAW]?: Buffer; [REPLAY_OF]?: number };

const DAY_MS = 24 * 60 * 60 * 1000;

/** The gate: this request is under the hooks path and gets a row; bodies are kept `keepBodies` days (0: none). */
export function noteHooks(res: ServerResponse, path: string, keepBodies: number): void {
  (res as Marked)[HOOKS] = keepBodies;
  (res as Marked)[PATH] = path;
}

/** The error code the request is refused with (the gate, the error handler). */
export function noteError(res: ServerResponse, code: ErrorCode): void {
  (res as Marked)[ERROR] = code;
}

/** The body as read (body.ts): kept in the row under `hooks.keepBodies`. */
export function noteRaw(req: IncomingMessage, raw: Buffer): void {
  (req as MarkedRequest)[RAW] = raw;
}

/** The gate: a console replay of the row `seq` (http/replay.ts checked its marker). */
export function noteReplay(req: IncomingMessage, seq: number): void {
  (req as MarkedRequest)[REPLAY_OF] = seq;
}

/** The seq of the row a console replay repeats; undefined for any other request. */
export function replayOf(req: IncomingMessage): number | undefined {
  return (req as MarkedRequest)[REPLAY_OF];
}

/** The request's row was committed with its accept: the close hook makes none. */
export function noteCommitted(res: ServerResponse): void {
  (res as Marked)[COMMITTED] = true;
}

/**
 * The row of a request under the hooks path, or undefined for any other request. `accepted`:
 * what its accept committed (the route calls this just before the commit).
 */
export function requestRow(res: ServerResponse, status: number, accepted?: readonly Accepted[]): NewRequestLog | undefined {
  const m = res as Marked;
  const keep = m[HOOKS];
  if (keep === undefined) return undefined;
  const req = res.req as MarkedRequest;
  const now = Date.now();
  const ms = m[START] === undefined ? 0 : performance.now() - m[START];
  const eventIds: string[] = [];
  const runIds: string[] = [];
  if (accepted) for (const a of accepted) (a.action === 'wake' ? eventIds.push(a.eventId) : runIds.push(a.runId));
  const h = req.headers;
  const row: NewRequestLog = {
    at: new Date(now - ms).toISOString(),
    requestId: m[REQUEST_ID],
    method: printable(req.method ?? '', 16),
    path: printable(m[PATH] ?? '', 200),
    route: routeLabel(res),
    status,
    ms: Math.round(ms * 10) / 10,
    eventIds,
    runIds,
    replayed: accepted === undefined && res.getHeader(REPLAYED_HEADER) === 'true',
    error: m[ERROR],
    contentType: typeof h['content-type'] === 'string' ? printable(h['content-type'], 100) : undefined,
    userAgent: typeof h['user-agent'] === 'string' ? printable(h['user-agent'], 200) : undefined,
    replayOf: req[REPLAY_OF],
  };
  const raw = keep > 0 ? req[RAW] : undefined;
  if (raw !== undefined) {
    row.body = raw.toString('utf8');
    row.bodyUntil = new Date(now + keep * DAY_MS).toISOString();
  }
  return row;
}

/** The close hook's side: rows of answered requests that no accept committed. */
export interface RequestLogger {
  /** A response closed (access-log.ts): its row, unless its accept committed it, goes to the buffer. */
  closed(res: ServerResponse): void;
  /**
   * Resolves once the row of the request with this X-Request-Id is stored, or after
   * `timeoutMs`: a console replay waits for its own row. Only replays are waited for: their
   * rows are written at once, not buffered.
   */
  stored(requestId: string, timeoutMs: number): Promise<void>;
}

export function createRequestLogger(buffer: RequestLogBuffer, store: Pick<Store, 'logRequests'>): RequestLogger {
  const waiting = new Map<string, () => void>();
  const settle = (id: string | undefined) => {
    if (id === undefined) return;
    waiting.get(id)?.();
    waiting.delete(id);
  };
  return {
    closed(res) {
      const m = res as Marked;
      if (m[HOOKS] === undefined) return;
      const replay = (res.req as MarkedRequest)[REPLAY_OF] !== undefined;
      if (m[COMMITTED]) {
        if (replay) settle(m[REQUEST_ID]);
        return;
      }
      const row = requestRow(res, res.statusCode)!;
      if (!replay) {
        buffer.add(row);
        return;
      }
      const done = () => settle(m[REQUEST_ID]);
      store.logRequests([row]).then(done, done);
    },
    stored(requestId, timeoutMs) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(requestId);
          resolve();
        }, timeoutMs).unref();
        waiting.set(requestId, () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
