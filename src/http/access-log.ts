import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type { Logger } from '../log.js';
import { printable } from '../printable.js';
import type { Metrics } from '../metrics.js';
import type { Exchange } from './exchange.js';
import { SENDER_ID, type RequestLogger } from './request-log.js';

/** What is recorded when a response closes, also when the client left: the access line (no query, headers or body), request metrics and the request log's row. */
export interface AccessLog {
  /** Notes a request's start, gives it its `X-Request-Id` (when logging) and arms the close hook. */
  begin(ex: Exchange): void;
}

/** The access log, request metrics and request log; undefined when none is on (nothing per request then). */
export function createAccessLog(log: Logger, metrics?: Pick<Metrics, 'request'>, requests?: RequestLogger): AccessLog | undefined {
  const logging = log.isLevelEnabled('info');
  if (!logging && !metrics && !requests) return undefined;
  // The line goes to the logger's own output (log.ts: stderr, buffered, never blocking).
  const output = (log as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym]!;
  const bindings = ((log as unknown as Record<symbol, string | undefined>)[pino.symbols.chindingsSym]) ?? '';

  // A per-process prefix and a counter: unique across restarts without a random draw per request.
  const prefix = randomBytes(4).toString('hex');
  let seq = 0;

  function closed(ex: Exchange): void {
    const res = ex.res;
    const ms = performance.now() - ex.start;
    metrics?.request(ex.label, res.statusCode, ms / 1000);
    requests?.closed(ex);
    // Its connection keeps the record until its next request (server.ts): not the body.
    if (ex.answered) ex.raw = undefined;
    if (!logging) return;
    const url = ex.req.url ?? '';
    const q = url.indexOf('?');
    output.write(accessLine(bindings, ex.requestId!, ex.req.method ?? '', printable(q < 0 ? url : url.slice(0, q), 200), ex.label, res.statusCode, Math.round(ms * 10) / 10, ex.sender?.name, !res.writableFinished));
  }

  return {
    begin(ex) {
      ex.start = performance.now();
      if (logging) {
        const given = ex.req.headers['x-request-id'];
        ex.requestId = typeof given === 'string' && SENDER_ID.test(given) ? given : `${prefix}-${(++seq).toString(36)}`;
        ex.res.setHeader('x-request-id', ex.requestId);
      }
      ex.res.once('close', () => closed(ex));
    },
  };
}

/** The access line as pino writes `log.info({reqId, method, path, route, status, ms, sender?, aborted?}, 'request')` (a spec compares them). */
export function accessLine(bindings: string, reqId: string, method: string, path: string, route: string, status: number, ms: number, sender: string | undefined, aborted: boolean): string {
  return `{"level":30,"time":${Date.now()}${bindings},"reqId":${PLAIN_ID.test(reqId) ? `"${reqId}"` : JSON.stringify(reqId)},"method":${quoted(printable(method, 16))},"path":${JSON.stringify(path)},"route":${quoted(route)},"status":${status},"ms":${ms}${sender === undefined ? '' : `,"sender":${quoted(sender)}`}${aborted ? ',"aborted":true' : ''},"msg":"request"}\n`;
}

const PLAIN_ID = /^[A-Za-z0-9._:-]*$/;

/** The JSON text of a string of a small set (methods, route labels, token names), made once each; bounded. */
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
