import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import { printable } from '../printable.js';
import type { Metrics } from '../metrics.js';
import type { Exchange } from './exchange.js';
import { SENDER_ID, type RequestLogger } from './request-log.js';

export type AccessLog = ReturnType<typeof createAccessLog>;

/** What is recorded when a response closes, also when the client left: the access line (no query, headers or body), request metrics and the request log's row. */
export function createAccessLog(log: Logger, metrics: Pick<Metrics, 'request'> | undefined, requests: RequestLogger) {
  const logging = log.isLevelEnabled('info');
  // A per-process prefix and a counter: unique across restarts without a random draw per request.
  const prefix = randomBytes(4).toString('hex');
  let seq = 0;

  function closed(ex: Exchange): void {
    const res = ex.res;
    const ms = performance.now() - ex.start;
    metrics?.request(ex.label, res.statusCode, ms / 1000);
    requests.closed(ex);
    // Its connection keeps the record until its next request (server.ts): not the body.
    if (ex.answered) ex.raw = undefined;
    if (!logging) return;
    const url = ex.req.url ?? '';
    const q = url.indexOf('?');
    const line: Record<string, unknown> = {
      reqId: ex.requestId,
      method: printable(ex.req.method ?? '', 16),
      path: printable(q < 0 ? url : url.slice(0, q), 200),
      route: ex.label,
      status: res.statusCode,
      ms: Math.round(ms * 10) / 10,
    };
    if (ex.sender !== undefined) line.sender = ex.sender.name;
    if (!res.writableFinished) line.aborted = true;
    log.info(line, 'request');
  }

  return {
    /** Notes a request's start, gives it its `X-Request-Id` (when logging) and arms the close hook. */
    begin(ex: Exchange): void {
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
