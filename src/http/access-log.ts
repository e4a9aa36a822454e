import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { pino } from 'pino';
import type { Logger } from '../log.js';
import { printable } from '../printable.js';
import type { Metrics } from '../metrics.js';
import { exchangeOf, type Exchange } from './exchange.js';
import { SENDER_ID, type RequestLogger } from './request-log.js';

/**
 * What is recorded when a request ends, from its record (exchange.ts) alone: one access line
 * at info level, `{reqId, method, path, route, status, ms}` (and `sender`, a named hooks
 * token's name), the request metrics (`hookrelay_requests_total`,
 * `hookrelay_request_duration_seconds`, src/metrics.ts) and the request log's row of a request
 * that no accept committed (request-log.ts). Every request is covered — those the gate refuses
 * (401, 404, 405, 413, 429), the 503s of a stopping gateway, what the app answers, and those
 * whose client went away first — because it is written when the response closes, whoever
 * answered (answer.ts). `route` is the request's route label (route-label.ts).
 *
 * What a line never holds: the query (it may carry the token), headers, bodies. The path is
 * request-derived, so it is escaped (no control character reaches the log) and capped.
 */
export interface AccessLog {
  /** Call first thing for each request: notes its start, gives it its `X-Request-Id` (when logging) and arms the record. */
  begin(ex: Exchange): void;
}

/**
 * The access log, request metrics and request log, or undefined when `log` does not write
 * info lines and there are neither metrics nor a request log: then it costs nothing on the
 * request path. Metrics alone cost a timestamp and one listener per request, no allocation of
 * our own; the request log adds, for requests under the hooks path, the row. X-Request-Id is
 * set when lines are logged (the row keeps it, or else a sender's own).
 */
export function createAccessLog(log: Logger, metrics?: Pick<Metrics, 'request'>, requests?: RequestLogger): AccessLog | undefined {
  const logging = log.isLevelEnabled('info');
  if (!logging && !metrics && !requests) return undefined;
  // The line goes to the logger's own output (log.ts: stderr, buffered, never blocking).
  const output = (log as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym]!;
  // The logger's own bindings (a child's, e.g. serve's `instance`), as pino writes them after the time.
  const bindings = ((log as unknown as Record<symbol, string | undefined>)[pino.symbols.chindingsSym]) ?? '';

  // A per-process prefix and a counter: unique across restarts without a random draw per request.
  const prefix = randomBytes(4).toString('hex');
  let seq = 0;

  function onClose(this: ServerResponse): void {
    const ex = exchangeOf(this.req);
    const ms = performance.now() - ex.start;
    metrics?.request(ex.label, this.statusCode, ms / 1000);
    requests?.closed(ex);
    // Its connection keeps the record until its next request (server.ts): not the body. (An
    // unanswered request's handler may still be at work: its client left, and so does the record.)
    if (ex.answered) ex.raw = undefined;
    if (!logging) return;
    const url = ex.req.url ?? '';
    const q = url.indexOf('?');
    output.write(accessLine(bindings, ex.requestId!, ex.req.method ?? '', printable(q < 0 ? url : url.slice(0, q), 200), ex.label, this.statusCode, Math.round(ms * 10) / 10, ex.sender?.name, !this.writableFinished));
  }

  return {
    begin(ex) {
      ex.start = performance.now();
      if (logging) {
        const given = ex.req.headers['x-request-id'];
        // answer.ts writes it in the answer's head.
        ex.requestId = typeof given === 'string' && SENDER_ID.test(given) ? given : `${prefix}-${(++seq).toString(36)}`;
      }
      ex.res.on('close', onClose);
    },
  };
}

/**
 * The access line, exactly as pino writes `log.info({reqId, method, path, route, status, ms,
 * sender?, aborted?}, 'request')` with createLogger's options (level, time, the logger's
 * bindings — pino's `chindings`, already JSON with a leading comma — the fields, msg) —
 * built as one template string instead: pino's generic path (the redaction walk, a property
 * loop with a stringifier per value, the optional fields spread in) cost about three times as
 * much per request (measured: see docs/performance.md). Nothing in it is a secret, so there is
 * nothing to redact; every string is JSON text as JSON.stringify writes it. A spec compares it
 * with pino's.
 */
export function accessLine(bindings: string, reqId: string, method: string, path: string, route: string, status: number, ms: number, sender: string | undefined, aborted: boolean): string {
  return `{"level":30,"time":${Date.now()}${bindings},"reqId":${PLAIN_ID.test(reqId) ? `"${reqId}"` : JSON.stringify(reqId)},"method":${quoted(printable(method, 16))},"path":${JSON.stringify(path)},"route":${quoted(route)},"status":${status},"ms":${ms}${sender === undefined ? '' : `,"sender":${quoted(sender)}`}${aborted ? ',"aborted":true' : ''},"msg":"request"}\n`;
}

/** A request id of these characters (ours, or a sender's that SENDER_ID admitted) is its JSON text between quotes. */
const PLAIN_ID = /^[A-Za-z0-9._:-]*$/;

/**
 * The JSON text of a string of a small set — the methods Node's parser takes, route labels
 * (route-label.ts: from the route table and the config), hooks token names — made once each:
 * a JSON.stringify per field was ~1 µs of every line. Bounded all the same.
 */
const QUOTED = new Map<string, string>();
const QUOTED_MAX = 1_000;
function quoted(text: string): string {
  let json = QUOTED.get(text);
  if (json === undefined) {
    json = JSON.stringify(text);
    if (QUOTED.size < QUOTED_MAX) QUOTED.set(text, json);
  }
  return json;
}
