import { EventEmitter, once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { actionIds, type Accepted } from '../action.js';
import { keptHead } from '../credentials.js';
import { printable } from '../printable.js';
import { keptExplanation } from '../match-explanation.js';
import type { RequestLogBuffer } from '../store/request-log.js';
import type { NewRequestLog } from '../store/records.js';
import { createAddressCounts } from './address-counts.js';
import type { Exchange } from './exchange.js';
import { isMultipart } from './multipart.js';

/*
 * The request log's rows (CONTRACT.md §11): an accepted request's is committed with its accept,
 * every other one buffered when its response closes. No credential; a body only under
 * `hooks.keepBodies` and never a refusal's (§8); refusals' rows capped per address.
 */
const DAY_MS = 24 * 60 * 60 * 1000;
/** A row keeps the request's path cut at this many characters (replay.ts can send only an uncut one again). */
export const LOGGED_PATH_MAX = 200;

/** A sender's own X-Request-Id is kept when it is a plain token of at most 64 characters (access-log.ts). */
export const SENDER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Rows of refused requests kept per client address and minute; the rest are dropped and counted. */
const REFUSALS_PER_MINUTE = 60;
const REFUSING_ADDRESSES = 50_000;
const MINUTE_MS = 60_000;

/** The statuses of a refusal (CONTRACT.md §8): turned away before it was acted on, for who sent it or how. */
const REFUSALS = new Set([401, 429, 413, 403, 405, 408, 415]);

/** The row of a `logged` request, else undefined; `accepted`: what its accept commits with it. */
export function requestRow(ex: Exchange, status: number, accepted?: readonly Accepted[]): NewRequestLog | undefined {
  if (!ex.logged) return undefined;
  const req = ex.req;
  const now = Date.now();
  const ms = ex.start === 0 ? 0 : performance.now() - ex.start;
  const { eventIds, runIds } = actionIds(accepted ?? []);
  const h = req.headers;
  const row: NewRequestLog = {
    at: new Date(Math.round(now - ms)).toISOString(),
    requestId: requestIdOf(ex),
    method: req.method ?? '',
    path: printable(ex.route!.path, LOGGED_PATH_MAX),
    route: ex.label,
    status,
    ms: Math.round(ms * 10) / 10,
    eventIds,
    runIds,
    replayed: accepted === undefined && ex.replayed,
    error: ex.error,
    contentType: typeof h['content-type'] === 'string' ? printable(h['content-type'], 100) : undefined,
    userAgent: typeof h['user-agent'] === 'string' ? printable(h['user-agent'], 200) : undefined,
    replayOf: ex.replayOf,
    sender: ex.sender?.name,
    explanation: ex.explanation && keptExplanation(ex.explanation),
    failures: ex.failures,
  };
  // A form's body holds its files, whose contents are never kept (CONTRACT.md §12; multipart.ts).
  if (ex.keepBodies > 0 && ex.raw !== undefined && !REFUSALS.has(status) && !isMultipart(h['content-type'])) {
    row.body = ex.raw.toString('utf8');
    row.bodyUntil = new Date(now + ex.keepBodies * DAY_MS).toISOString();
    const head = keptHead(h, ex.route!.query, ex.credentialHeaders);
    row.headers = head.headers;
    if (head.query !== undefined) row.query = head.query;
  }
  return row;
}

function requestIdOf(ex: Exchange): string | undefined {
  if (ex.requestId !== undefined) return ex.requestId;
  const given = ex.req.headers['x-request-id'];
  return typeof given === 'string' && SENDER_ID.test(given) ? given : undefined;
}

function closedRow(ex: Exchange): NewRequestLog {
  return requestRow(ex, ex.res.statusCode)!;
}

/** The close hook's side: rows of answered requests that no accept committed. */
export type RequestLogger = ReturnType<typeof createRequestLogger>;

export function createRequestLogger(buffer: RequestLogBuffer, addressOf: (req: IncomingMessage) => string) {
  // One event per X-Request-Id of a replay whose row is stored.
  const rows = new EventEmitter();
  const refusals = createAddressCounts(MINUTE_MS, REFUSING_ADDRESSES);
  return {
    /** A response closed (access-log.ts): its row, unless its accept committed it, goes to the buffer. */
    closed(ex: Exchange): void {
      if (!ex.logged) return;
      const status = ex.res.statusCode;
      if (ex.replayOf === undefined) {
        if (ex.committed) return;
        if (REFUSALS.has(status) && refusals.hit(addressOf(ex.req), Date.now()).count > REFUSALS_PER_MINUTE) {
          buffer.drop(1);
          return;
        }
        buffer.offer(closedRow, ex);
        return;
      }
      // A replay's row is written at once: the console waits for it (replay.ts).
      const done = () => rows.emit(requestIdOf(ex) ?? '');
      if (ex.committed || !buffer.offer(closedRow, ex)) done();
      else buffer.flush().then(done, done);
    },
    /** Resolves once the row of this X-Request-Id is stored, or after `timeoutMs` (a console replay waits for its own). */
    async stored(requestId: string, timeoutMs: number): Promise<void> {
      // https://nodejs.org/api/events.html#eventsonceemitter-name-options: the listener goes when the signal aborts.
      await once(rows, requestId, { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
    },
  };
}
