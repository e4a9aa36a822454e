import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { ERRORS, errorBody, type ErrorCode } from '../errors.js';
import type { Exchange } from './exchange.js';

export const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });

/** Sets the answer on Koa's response, which measures the body for Content-Length; one before the body's end (past `drainable` bytes) is {@link answerAndClose}'s. */
export function answer(ex: Exchange, status: number, headers: OutgoingHttpHeaders, body?: string | Buffer, drainable = 0): void {
  ex.answered = true;
  if (bodyMayFollow(ex.req, drainable)) return answerAndClose(ex, status, headers, body);
  const ctx = ex.ctx;
  // An explicit null body: Koa answers it with Content-Length 0 and no Content-Type (koa lib/application.js respond).
  if (body === undefined) ctx.body = null;
  ctx.status = status;
  ctx.set(headers as Record<string, string>);
  if (body !== undefined) ctx.body = body;
}

/** What is read and dropped of a body after an answer given before its end (CONTRACT.md §8). */
const LINGER_BYTES = 1024 * 1024;
const LINGER_MS = 5_000;

/**
 * Closes once the body ended or {@link LINGER_BYTES} / {@link LINGER_MS} passed: unread bytes reset the connection,
 * which can destroy the answer before it is read (RFC 9112 §9.6, nginx's lingering_close). Koa ends
 * a response right after its middleware, so this one bypasses it (https://koajs.com/#ctx-respond).
 * No body comes after a 408, nor to an `Expect: 100-continue` never continued (RFC 9110 §10.1.1).
 */
function answerAndClose(ex: Exchange, status: number, headers: OutgoingHttpHeaders, body?: string | Buffer): void {
  const { req, res } = ex;
  ex.ctx.respond = false;
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  if (body !== undefined) res.setHeader('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  // No Content-Length on a 204 (RFC 9110 §8.6), nor on a 304 answering no body.
  else if (status !== 204 && status !== 304) res.setHeader('content-length', 0);
  res.setHeader('connection', 'close');
  res.writeHead(status);
  if (status === 408 || (!ex.continued && req.headers.expect !== undefined)) {
    res.end(body);
    return;
  }
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
  answer(ex, status, JSON_HEADERS, typeof body === 'string' ? body : JSON.stringify(body));
}

/** Answers the contract's JSON error body for `code` and notes the code on the record (the request log keeps it). */
export function refuse(ex: Exchange, code: ErrorCode, message: string, headers?: Record<string, string>, drainable = 0): void {
  ex.error = code;
  answer(ex, ERRORS[code].status, headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers }, errorBody(code, message), drainable);
}

/** Begins an answer the caller writes on and ends (the console's event stream), outside Koa's respond (https://koajs.com/#ctx-respond). */
export function answerStream(ex: Exchange, status: number, headers: OutgoingHttpHeaders): void {
  ex.answered = true;
  ex.ctx.respond = false;
  ex.res.writeHead(status, headers);
}

/** Whether body bytes past `drainable` may come: none without Content-Length or Transfer-Encoding (RFC 9112 §6.3). */
function bodyMayFollow(req: IncomingMessage, drainable: number): boolean {
  if (req.complete) return false;
  const h = req.headers;
  const length = h['content-length'];
  return h['transfer-encoding'] !== undefined || (length !== undefined && !(Number(length) <= drainable));
}
