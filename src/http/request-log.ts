import type { IncomingMessage, ServerResponse } from 'node:http';
import { actionIds, type Accepted } from '../dispatch/runtime.js';
import type { ErrorCode } from '../errors.js';
import { printable } from '../printable.js';
import type { RequestLogBuffer } from '../store/request-log.js';
import type { NewRequestLog } from '../store/records.js';
import type { Store } from '../store/store.js';
import { createAddressCounts } from './address-counts.js';
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
 * body only under `hooks.keepBodies`, and never a refused request's (CONTRACT.md §8): a
 * stranger's bytes are not stored.
 *
 * Refusals cannot grow the store without bound either: the rows of refused requests are kept
 * for at most {@link REFUSALS_PER_MINUTE} a minute per client address, the rest counted as
 * dropped (`hookrelay_request_log_dropped_total`). Only refusals are counted per address: an
 * accepted request's row is always kept, and costs nothing more.
 *
 * What the layers learn about a request goes into one small record per request under the hooks
 * path, made by the gate with every field present: one symbol on the response, one object of
 * one shape, rather than a property per fact — properties added one by one to Node's request
 * and response objects would give them many shapes and slow every access to them.
 */
const LOG = Symbol('hookrelay.log');

interface LogMarks {
  /** hooks.keepBodies of the handler that took the request. */
  keep: number;
  path: string;
  /** The error code it was refused with. */
  error: string | undefined;
  /** Its row was committed with its accept. */
  committed: boolean;
  /** The body as read, only when it is to be kept. */
  raw: Buffer | undefined;
  /** A console replay of the row of this seq. */
  replayOf: number | undefined;
  /** The gate's client address (trustedProxies-aware, client-address.ts), asked only of a refusal. */
  addressOf: (req: IncomingMessage) => string;
  /** The `name` of the scoped hooks token it came with (never the token). */
  sender: string | undefined;
}

type Marked = ServerResponse & { [LOG]?: LogMarks; [START]?: number };

/** When the request began (performance.now()): set by access-log.ts. */
export const START = Symbol('hookrelay.start');

const DAY_MS = 24 * 60 * 60 * 1000;
/** A row keeps the request's path cut at this many characters (replay.ts can send only an uncut one again). */
export const LOGGED_PATH_MAX = 200;

/** A sender's own X-Request-Id is kept when it is a plain token of at most 64 characters (access-log.ts). */
export const SENDER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Rows of refused requests kept per client address and minute; the rest are dropped and counted. */
export const REFUSALS_PER_MINUTE = 60;
/** Addresses whose refusals are counted at most (address-counts.ts: a spray of addresses cannot grow the table). */
const REFUSING_ADDRESSES = 50_000;
const MINUTE_MS = 60_000;

/**
 * A refusal (CONTRACT.md §8): the request was turned away before it was acted on, for who sent
 * it or how — no token or signature (401), not its route (403), method (405), too slow (408),
 * too large (413), an encoding it cannot read (415), too many failures (429).
 */
function isRefusal(status: number): boolean {
  return status === 401 || status === 429 || status === 413 || status === 403 || status === 405 || status === 408 || status === 415;
}

/**
 * The gate: this request is under the hooks path and gets a row; bodies are kept `keepBodies`
 * days (0: none); `addressOf` is the gate's own client address.
 */
export function noteHooks(res: ServerResponse, path: string, keepBodies: number, addressOf: (req: IncomingMessage) => string): void {
  (res as Marked)[LOG] = { keep: keepBodies, path, error: undefined, committed: false, raw: undefined, replayOf: undefined, addressOf, sender: undefined };
}

/** The error code the request is refused with (the gate, the error handler). */
export function noteError(res: ServerResponse, code: ErrorCode): void {
  const m = (res as Marked)[LOG];
  if (m !== undefined) m.error = code;
}

/** The body as read (body.ts): kept in the row under `hooks.keepBodies`. */
export function noteRaw(res: ServerResponse, raw: Buffer): void {
  const m = (res as Marked)[LOG];
  if (m !== undefined && m.keep > 0) m.raw = raw;
}

/** The gate: a console replay of the row `seq` (http/replay.ts checked its marker). */
export function noteReplay(res: ServerResponse, seq: number): void {
  const m = (res as Marked)[LOG];
  if (m !== undefined) m.replayOf = seq;
}

/** The gate: the request came with the hooks token named `name` (`hooks.tokens[].name`). */
export function noteSender(res: ServerResponse, name: string): void {
  const m = (res as Marked)[LOG];
  if (m !== undefined) m.sender = name;
}

/** The name of the hooks token a request came with; undefined when it has none. */
export function senderOf(res: ServerResponse): string | undefined {
  return (res as Marked)[LOG]?.sender;
}

/** The seq of the row a console replay repeats; undefined for any other request. */
export function replayOf(res: ServerResponse): number | undefined {
  return (res as Marked)[LOG]?.replayOf;
}

/** The request's row was committed with its accept: the close hook makes none. */
export function noteCommitted(res: ServerResponse): void {
  const m = (res as Marked)[LOG];
  if (m !== undefined) m.committed = true;
}

/**
 * The row of a request under the hooks path, or undefined for any other request. `accepted`:
 * what its accept committed (the route calls this just before the commit).
 */
export function requestRow(res: ServerResponse, status: number, accepted?: readonly Accepted[]): NewRequestLog | undefined {
  const m = (res as Marked)[LOG];
  if (m === undefined) return undefined;
  const req = res.req;
  const now = Date.now();
  const start = (res as Marked)[START];
  const ms = start === undefined ? 0 : performance.now() - start;
  const { eventIds, runIds } = actionIds(accepted ?? []);
  const h = req.headers;
  const row: NewRequestLog = {
    at: isoAt(Math.round(now - ms)),
    requestId: requestIdOf(res),
    // Node's parser admits only token characters in a method.
    method: req.method ?? '',
    path: printable(m.path, LOGGED_PATH_MAX),
    route: routeLabel(res),
    status,
    ms: Math.round(ms * 10) / 10,
    eventIds,
    runIds,
    replayed: accepted === undefined && res.getHeader(REPLAYED_HEADER) === 'true',
    error: m.error,
    contentType: typeof h['content-type'] === 'string' ? printable(h['content-type'], 100) : undefined,
    userAgent: typeof h['user-agent'] === 'string' ? printable(h['user-agent'], 200) : undefined,
    replayOf: m.replayOf,
    sender: m.sender,
  };
  if (m.raw !== undefined && !isRefusal(status)) {
    row.body = m.raw.toString('utf8');
    row.bodyUntil = new Date(now + m.keep * DAY_MS).toISOString();
  }
  return row;
}

/**
 * ISO text of a time in ms, the last one remembered: requests arriving within the same
 * millisecond (most of them, under load) share one string instead of formatting a Date each.
 */
let lastMs = -1;
let lastIso = '';
function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** The X-Request-Id the answer carries (the access log's, when it logs), else the sender's own plain one. */
function requestIdOf(res: ServerResponse): string | undefined {
  const ours = res.getHeader('x-request-id');
  if (typeof ours === 'string') return ours;
  const given = res.req.headers['x-request-id'];
  return typeof given === 'string' && SENDER_ID.test(given) ? given : undefined;
}

/** The row of a request no accept committed, once its response has closed. */
function closedRow(res: ServerResponse): NewRequestLog {
  return requestRow(res, res.statusCode)!;
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
  const refusals = createAddressCounts(MINUTE_MS, REFUSING_ADDRESSES);
  const settle = (id: string | undefined) => {
    if (id === undefined) return;
    waiting.get(id)?.();
    waiting.delete(id);
  };
  return {
    closed(res) {
      const m = (res as Marked)[LOG];
      if (m === undefined) return;
      if (m.replayOf === undefined) {
        if (m.committed) return;
        if (isRefusal(res.statusCode) && refusals.hit(m.addressOf(res.req), Date.now()).count > REFUSALS_PER_MINUTE) {
          buffer.drop(1);
          return;
        }
        // When the buffer is full the row is dropped (and counted) before it is made.
        buffer.offer(closedRow, res);
        return;
      }
      const done = () => settle(requestIdOf(res));
      if (m.committed) done();
      else store.logRequests([requestRow(res, res.statusCode)!]).then(done, done);
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
