import type { IncomingMessage } from 'node:http';
import type { DefaultState, Middleware } from 'koa';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { HookError } from '../errors.js';
import { printable } from '../printable.js';
import type { Exchange, ExchangeContext } from './exchange.js';
import { parsePayload } from './payload.js';
import { isMultipart, parseMultipart } from './multipart.js';
import { ROUTE_KINDS } from './routes-table.js';
import type { Payload } from '../transform-types.js';
import type { BodyLimit, BodyLimits } from './body-limits.js';

/** Reads a send route's body, decoded, onto the record (`raw`): 413 past its limit on the wire or decoded, 408 past `bodyTimeoutMs`, 415 for an unknown encoding. */
export function bodyParser(bodyLimit: BodyLimits, bodyTimeoutMs: number): Middleware<DefaultState, ExchangeContext> {
  return async function readBody(ctx, next) {
    const ex = ctx.exchange;
    const route = ex.route!;
    if (ROUTE_KINDS[route.kind].methods === 'POST') ex.raw = await readLimited(ex, bodyLimit(route), bodyTimeoutMs);
    return next();
  };
}

/** The body as a payload: JSON, or on mapped hooks a form or multipart form (payload.ts, multipart.ts). */
export function payloadOf(ex: Exchange, maxBytes: number): Payload | Promise<Payload> {
  const type = ex.req.headers['content-type'];
  const mapped = ex.route!.kind === 'mapped';
  return mapped && isMultipart(type) ? parseMultipart(ex.raw!, type, maxBytes) : parsePayload(ex.raw!, type, mapped);
}

/** The body codings a sender may use (RFC 9110 §8.4.1); a raw deflate stream is told apart by its first bytes. */
const DECODERS: Record<string, (first: Buffer) => zlib.Zlib & Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: (first) => (isZlibHeader(first) ? zlib.createInflate() : zlib.createInflateRaw()),
  br: () => zlib.createBrotliDecompress(),
};

/** A zlib stream starts with CMF/FLG: compression method 8 and a multiple of 31 (RFC 1950 §2.2). */
function isZlibHeader(b: Buffer): boolean {
  return b.length < 2 || ((b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0);
}

/** The read of one body, on the request's record while it lasts: the listeners below are shared, and find it through {@link reading}. */
export interface ReadState {
  chunks: Buffer[];
  size: number;
  wire: number;
  limit: number;
  limitName: string;
  deadline: number;
  timeoutMs: number;
  resolve: (bytes: Buffer) => void;
  reject: (err: Error) => void;
  encoding: string | undefined;
  decoder: (zlib.Zlib & Transform) | undefined;
  gzipMagic: boolean;
}

/** At most `limit` bytes on the wire and decoded (a compression bomb stops at the limit), within `timeoutMs`. */
function readLimited(ex: Exchange, { bytes: limit, name: limitName }: BodyLimit, timeoutMs: number): Promise<Buffer> {
  const req = ex.req;
  const header = req.headers['content-encoding'];
  let encoding: string | undefined = header?.trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') encoding = undefined;
  if (encoding !== undefined && !Object.hasOwn(DECODERS, encoding)) {
    ex.res.setHeader('connection', 'close');
    return Promise.reject(new HookError('unsupported_encoding',
      `Content-Encoding ${JSON.stringify(printable(header!, 40))} is not supported: send the body as identity (no encoding), gzip, deflate or br, one encoding only`));
  }
  return new Promise((resolve, reject) => {
    ex.reading = { chunks: [], size: 0, wire: 0, limit, limitName, deadline: Date.now() + timeoutMs, timeoutMs, resolve, reject, encoding, decoder: undefined, gzipMagic: false };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    watch(ex);
  });
}

function onData(this: IncomingMessage, chunk: Buffer): void {
  const ex = reading.get(this)!;
  const s = ex.reading!;
  s.wire += chunk.length;
  if (s.wire > s.limit) return tooLarge(ex);
  if (s.encoding === undefined) return keep(ex, s, chunk);
  if (!s.decoder) s.decoder = decoderFor(ex, s, chunk);
  if (!s.decoder.write(chunk)) this.pause();
}

/** The decoder of an encoded body; a late event of a settled read (done()) does nothing. */
function decoderFor(ex: Exchange, s: ReadState, first: Buffer): zlib.Zlib & Transform {
  const d = DECODERS[s.encoding!]!(first);
  s.gzipMagic = first[0] === 0x1f && first[1] === 0x8b;
  d.on('data', (bytes: Buffer) => {
    if (ex.reading === s) keep(ex, s, bytes);
  });
  d.on('end', () => {
    if (ex.reading === s) onDecodedEnd(ex, s, d);
  });
  // Also keeps a late zlib error after destroy() (done()) from being unhandled.
  d.on('error', (err: Error) => {
    if (ex.reading === s) onDecodeError(ex, s, err);
  });
  d.on('drain', () => {
    if (ex.reading === s) ex.req.resume();
  });
  return d;
}

function keep(ex: Exchange, s: ReadState, bytes: Buffer): void {
  s.size += bytes.length;
  if (s.size > s.limit) return tooLarge(ex);
  s.chunks.push(bytes);
}

function onEnd(this: IncomingMessage): void {
  const ex = reading.get(this)!;
  const s = ex.reading!;
  if (s.decoder) s.decoder.end(); // settles in onDecodedEnd or onDecodeError
  else finish(ex);
}

/** Nothing may follow the compressed stream: zlib drops it silently, and gunzip reads it as a next member (RFC 1952 §2.2). */
function onDecodedEnd(ex: Exchange, s: ReadState, d: zlib.Zlib): void {
  if (d.bytesWritten < s.wire) return refuseTrailing(ex);
  finish(ex);
}

function onDecodeError(ex: Exchange, s: ReadState, err: Error): void {
  // A next gzip member with a wrong magic: what follows a complete member (zlib inflate.c).
  if (s.gzipMagic && err.message === 'incorrect header check') return refuseTrailing(ex);
  done(ex);
  ex.req.pause();
  // zlib's message says nothing a sender can act on; the connection may hold the rest of the stream.
  ex.res.setHeader('connection', 'close');
  s.reject(new HookError('invalid_json', `the ${s.encoding} body cannot be decoded`));
}

function refuseTrailing(ex: Exchange): void {
  const s = done(ex);
  if (!ex.req.complete) {
    ex.req.pause();
    ex.res.setHeader('connection', 'close');
  }
  s.reject(new HookError('invalid_json', `the ${s.encoding} body goes on after the end of its compressed stream: send the compressed stream alone`));
}

function finish(ex: Exchange): void {
  const s = done(ex);
  s.resolve(s.chunks.length === 1 ? s.chunks[0]! : Buffer.concat(s.chunks, s.size));
}

/** Past the limit: answer and close, without keeping or inflating the rest. */
function tooLarge(ex: Exchange): void {
  const s = done(ex);
  ex.req.pause();
  ex.res.setHeader('connection', 'close');
  s.reject(new HookError('payload_too_large', `the body is larger than ${s.limitName} (${s.limit} bytes${s.encoding ? ', decoded' : ''})`));
}

// A client that hangs up mid-body: 'error' with ECONNRESET (https://nodejs.org/api/http.html#event-aborted).
function onError(this: IncomingMessage, err: NodeJS.ErrnoException): void {
  done(reading.get(this)!).reject(err.code === 'ECONNRESET' ? new ClientClosedError() : err);
}

/** The client hung up before its body was complete: nothing to answer, noted in the log. */
export class ClientClosedError extends Error {
  constructor() {
    super('the client closed the connection before its body was complete');
    this.name = 'ClientClosedError';
  }
}

function done(ex: Exchange): ReadState {
  const s = ex.reading!;
  ex.reading = undefined;
  const req = ex.req;
  req.off('data', onData);
  req.off('end', onEnd);
  req.off('error', onError);
  unwatch(ex);
  s.decoder?.destroy();
  return s;
}

/* The bodies being read, by request; for hooks.bodyTimeoutMs one shared timer sweeps them, only while there are some. */
const SWEEP_EVERY_MS = 100;
const reading = new Map<IncomingMessage, Exchange>();
let sweeper: NodeJS.Timeout | undefined;

function watch(ex: Exchange): void {
  reading.set(ex.req, ex);
  if (!sweeper) sweeper = setInterval(sweep, SWEEP_EVERY_MS).unref();
}

function unwatch(ex: Exchange): void {
  reading.delete(ex.req);
}

function sweep(): void {
  if (reading.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
    return;
  }
  const now = Date.now();
  for (const ex of reading.values()) {
    if (ex.reading!.deadline > now) continue;
    const s = done(ex);
    ex.req.pause();
    ex.res.setHeader('connection', 'close');
    s.reject(new HookError('request_timeout', `the body did not arrive within hooks.bodyTimeoutMs (${s.timeoutMs} ms)`));
  }
}
