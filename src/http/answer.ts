import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { ERRORS, errorBody, type ErrorCode } from '../errors.js';
import type { Exchange } from './exchange.js';

/*
 * The one writer of answers (the gate's, the handlers', the error step's, the console's): Koa
 * writes nothing (https://koajs.com/#ctx-respond), so that no request has two answers. The close
 * hook (access-log.ts) records what was answered from the request's record.
 */

const JSON_TYPE = 'application/json; charset=utf-8';

export function bodyHeaders(type: string, byteLength: number): Record<string, string> {
  return { 'content-type': type, 'content-length': String(byteLength) };
}

export function jsonHeaders(byteLength: number): Record<string, string> {
  return bodyHeaders(JSON_TYPE, byteLength);
}

/**
 * Writes the answer. One given before the body was read to its end closes the connection,
 * unless the rest is announced as at most `drainable` bytes; before the close up to
 * {@link LINGER_BYTES} more of the body is read ({@link endAfterBody}) — not after a 408, nor a
 * refusal of an `Expect: 100-continue` request never told to continue (RFC 9110 §10.1.1).
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
 * Ends the answer (and the connection) once the body ended, {@link LINGER_BYTES} more were read
 * or {@link LINGER_MS} passed: closing with unread bytes resets the connection, which can destroy
 * the answer before the client reads it (RFC 9112 §9.6; nginx's lingering_close does the same).
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

/** Answers the contract's JSON error body for `code` and notes the code on the record (the request log keeps it). */
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

/** The head as one flat list, with the request's id and `Connection: close` when `close`. */
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
 * Whether body bytes past `drainable` may still come. A request without Content-Length or
 * Transfer-Encoding has none (RFC 9112 §6.3), though Node marks it `complete` only later.
 */
function bodyMayFollow(req: IncomingMessage, drainable: number): boolean {
  if (req.complete) return false;
  const h = req.headers;
  const length = h['content-length'];
  return h['transfer-encoding'] !== undefined || (length !== undefined && !(Number(length) <= drainable));
}
