import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { ERRORS, errorBody, type ErrorCode } from '../errors.js';
import type { Exchange } from './exchange.js';

/*
 * The one writer of answers. Every response of the listener is written here, on the raw
 * response: the gate's refusals in front of Koa, each handler's answer, the error handler's,
 * the console's pages, the 503 of a stopping gateway. Koa writes nothing itself (app.ts sets
 * `respond` false on its context, https://koajs.com/#ctx-respond): its status, type and body
 * setters and its `respond()` cost more per request than the rest of its part, and two
 * writers would make two answers possible. What is answered is noted on the request's record
 * (exchange.ts), from which the close hook (access-log.ts) finalises the access log, the
 * request-log row and the metrics — whoever answered, and also when the client went away first.
 */

const JSON_TYPE = 'application/json; charset=utf-8';

/** Headers of an answer with a body of `byteLength` bytes of `type`. */
export function bodyHeaders(type: string, byteLength: number): Record<string, string> {
  return { 'content-type': type, 'content-length': String(byteLength) };
}

/** Headers of a JSON answer of `byteLength` bytes. */
export function jsonHeaders(byteLength: number): Record<string, string> {
  return bodyHeaders(JSON_TYPE, byteLength);
}

/**
 * Writes the request's answer: `status`, `headers` (added to those set before with
 * `setHeader`/`ctx.set`) and `body`. An answer given before the request's body was read to its
 * end closes the connection, so that Node does not read (and wait for) all the rest of it —
 * unless the rest is announced with a Content-Length of at most `drainable` bytes: the gate's
 * refusals pass the body limit, since a small announced body costs little to drain and spares
 * a token guesser's client (and the benchmark's) a new connection. Before that close, up to
 * {@link LINGER_BYTES} or {@link LINGER_MS} more of the body is read and dropped
 * ({@link endAfterBody}) — except after a 408, whose body is what did not come, and after a
 * refusal of an `Expect: 100-continue` request never told to continue, whose client sends no
 * body on a final answer (RFC 9110 §10.1.1).
 */
export function answer(ex: Exchange, status: number, headers: OutgoingHttpHeaders, body?: string | Buffer, drainable = 0): void {
  ex.answered = true;
  const close = bodyMayFollow(ex.req, drainable);
  writeHead(ex, status, headers, close);
  const bodyComing = status !== 408 && (ex.continued || ex.req.headers.expect === undefined);
  if (close && bodyComing) endAfterBody(ex, body);
  else ex.res.end(body);
}

/** What is read and dropped of a body after an answer given before its end (CONTRACT.md §8). */
const LINGER_BYTES = 1024 * 1024;
const LINGER_MS = 5_000;

/**
 * Writes the answer now and ends it — which closes the connection (node:http, on
 * `Connection: close`) — only once the body has ended, or {@link LINGER_BYTES} more of it has
 * been read, or {@link LINGER_MS} have passed. Closing a socket with unread bytes in it resets
 * the connection (RFC 9112 §9.6, "the TCP reset problem"), and a client still sending its
 * body then meets EPIPE or ECONNRESET, which may destroy the answer before it reads it; nginx
 * (lingering_close) and Go's net/http read on for the same reason. A body that goes on past
 * the allowance is cut off: the reset then comes after a megabyte's worth of the client's
 * writes, long after the answer arrived.
 */
function endAfterBody(ex: Exchange, body?: string | Buffer): void {
  const { req, res } = ex;
  if (body === undefined || body.length === 0) res.flushHeaders();
  else res.write(body);
  let left = LINGER_BYTES;
  const discard = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) end();
  };
  const end = () => {
    clearTimeout(timer);
    req.off('data', discard);
    req.off('end', end);
    req.off('close', end);
    // Left unread: the close below resets the connection, which is the cut-off.
    if (!req.complete) req.pause();
    if (!res.destroyed) res.end();
  };
  const timer = setTimeout(end, LINGER_MS).unref();
  req.on('data', discard);
  req.on('end', end);
  req.on('close', end);
  req.resume();
}

/** Answers with a JSON body: an object, or text already serialized (`errorBody`, a stored answer). */
export function answerJson(ex: Exchange, status: number, body: object | string): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  answer(ex, status, jsonHeaders(Buffer.byteLength(text)), text);
}

/** Answers with a body of `type` (the console's pages and files, `/metrics`). */
export function answerBody(ex: Exchange, status: number, type: string, body: string | Buffer): void {
  answer(ex, status, bodyHeaders(type, typeof body === 'string' ? Buffer.byteLength(body) : body.length), body);
}

/**
 * Answers with the contract's JSON error body for `code` (its status from the catalog), and
 * notes the code on the record (the request log keeps it). `drainable`: see {@link answer}.
 */
export function refuse(ex: Exchange, code: ErrorCode, message: string, headers?: Record<string, string>, drainable = 0): void {
  ex.error = code;
  const body = errorBody(code, message);
  const h = jsonHeaders(Buffer.byteLength(body));
  answer(ex, ERRORS[code].status, headers === undefined ? h : Object.assign(h, headers), body, drainable);
}

/** Begins an answer that is written on over time (the console's event stream); the caller writes and ends it. */
export function answerStream(ex: Exchange, status: number, headers: OutgoingHttpHeaders): void {
  ex.answered = true;
  writeHead(ex, status, headers, false);
}

/**
 * The head: `headers` (after those set before), the request's id (`X-Request-Id`, when the
 * access log made one: access-log.ts) and `Connection: close` when `close`, handed to node:http
 * as one flat [name, value, …] list. With nothing set before, node:http stores the list as it
 * is; an id set with `setHeader` when the request began sent every answer's head down
 * writeHead's per-header path instead (each header through `setHeader` again).
 */
function writeHead(ex: Exchange, status: number, headers: OutgoingHttpHeaders, close: boolean): void {
  const id = ex.requestId;
  if (id === undefined && !close) {
    ex.res.writeHead(status, headers);
    return;
  }
  const head: (string | number | readonly string[])[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !(close && name === 'connection')) head.push(name, value);
  }
  if (id !== undefined) head.push('x-request-id', id);
  if (close) head.push('connection', 'close');
  ex.res.writeHead(status, head as string[]);
}

/**
 * Whether body bytes of `req` past `drainable` may still be on the way. A request without
 * Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3), yet Node marks it
 * `complete` only after its handler ran: a synchronous answer (`/healthz`) that closed its
 * connection lost the requests pipelined behind it (issue 30).
 */
function bodyMayFollow(req: IncomingMessage, drainable: number): boolean {
  if (req.complete) return false;
  const h = req.headers;
  const length = h['content-length'];
  return h['transfer-encoding'] !== undefined || (length !== undefined && !(Number(length) <= drainable));
}
