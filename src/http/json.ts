import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Headers of a JSON answer written on the raw response (the gate's, in front of Koa). */
export function jsonHeaders(byteLength: number): Record<string, string> {
  return { 'content-type': JSON_TYPE, 'content-length': String(byteLength) };
}

/**
 * Answers with a JSON body: an object, or text already serialized (`errorBody`). Written
 * straight on the raw response, and Koa told not to respond (`ctx.respond = false`,
 * https://koajs.com/#ctx-respond): this is every hook's answer, and Koa's status, type and
 * body setters and its `respond()` cost more per request than the rest of its part. Headers
 * set before (`ctx.set`) go out with it. An answer given before the request's body was read
 * to its end closes the connection, so that Node does not read (and wait for) the rest of it.
 */
export function sendJson(ctx: Context, status: number, body: object | string): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers = jsonHeaders(Buffer.byteLength(text));
  if (bodyMayFollow(ctx.req)) headers.connection = 'close';
  ctx.respond = false;
  ctx.res.writeHead(status, headers).end(text);
}

/**
 * Whether body bytes of `req` may still be on the way. A request without Content-Length or
 * Transfer-Encoding has no body (RFC 9112 §6.3), yet Node marks it `complete` only after its
 * handler ran: a synchronous answer (`/healthz`) closed its connection, and the requests
 * pipelined behind it were lost (issue 30).
 */
function bodyMayFollow(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
