import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import { printable } from '../printable.js';
import { routeOf } from './gate.js';

/**
 * One access line per request, at info level: `{reqId, method, path, route, status, ms}`.
 * Every request is covered — those the gate refuses (401, 404, 405, 413, 429), the 503s of a
 * stopping gateway and what the app answers — because the line is written when the response
 * closes, whoever wrote it. `route` is the mapping (`mapping:<id>`) when one matched, else the
 * built-in route (`wake`, `agent`, `events`, `runs`, `healthz`) or `-` for a refused target.
 *
 * What a line never holds: the query (it may carry the token), headers, bodies. The path is
 * request-derived, so it is escaped (no control character reaches the log) and capped.
 */
export interface AccessLog {
  /** Call first thing for each request: sets `X-Request-Id` and arms the line. */
  begin(req: IncomingMessage, res: ServerResponse): void;
}

const ENTRY = Symbol('hookrelay.access');
type Tracked = ServerResponse & { [ENTRY]?: Entry };

interface Entry {
  log: Logger;
  id: string;
  start: number;
  req: IncomingMessage;
  route: string | undefined;
}

/** A sender's own `X-Request-Id` is kept when it is a plain token of at most 64 characters. */
const SENDER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The access log, or undefined when `log` does not write info lines: then it costs nothing on
 * the request path (the benchmark's figures are measured at `warn`; see README Performance).
 */
export function createAccessLog(log: Logger): AccessLog | undefined {
  if (!log.isLevelEnabled('info')) return undefined;
  // A per-process prefix and a counter: unique across restarts without a random draw per request.
  const prefix = randomBytes(4).toString('hex');
  let seq = 0;
  return {
    begin(req, res) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && SENDER_ID.test(given) ? given : `${prefix}-${(++seq).toString(36)}`;
      res.setHeader('x-request-id', id);
      (res as Tracked)[ENTRY] = { log, id, start: performance.now(), req, route: undefined };
      res.once('close', onClose);
    },
  };
}

/** The gate's route for a request it let through; `unmatched` for a hook no mapping took. */
function routeLabel(req: IncomingMessage): string {
  const kind = routeOf(req)?.kind;
  if (kind === undefined) return '-';
  return kind === 'mapped' ? 'unmatched' : kind;
}

/** Names the route of a request (the app knows it once a mapping matched). No-op when the access log is off. */
export function noteRoute(res: ServerResponse, route: string): void {
  const entry = (res as Tracked)[ENTRY];
  if (entry) entry.route = route;
}

function onClose(this: Tracked): void {
  const entry = this[ENTRY]!;
  this[ENTRY] = undefined;
  const { req } = entry;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  entry.log.info({
    reqId: entry.id,
    method: printable(req.method ?? '', 16),
    path: printable(q < 0 ? url : url.slice(0, q), 200),
    route: entry.route ?? routeLabel(req),
    status: this.statusCode,
    ms: Math.round((performance.now() - entry.start) * 10) / 10,
    // A client that went away before the whole answer was written.
    ...(this.writableFinished ? {} : { aborted: true }),
  }, 'request');
}
