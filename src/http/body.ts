import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { HookError } from '../errors.js';
import { printable } from '../printable.js';
import { exchangeOf, type Exchange } from './exchange.js';
import { parsePayload } from './payload.js';
import { isMultipart, parseMultipart } from './multipart.js';
import { ROUTE_METHODS } from './routes-table.js';
import type { BodyLimit, BodyLimits } from './body-limits.js';

/**
 * Reads the request body onto the request's record (`raw`): decoded; 413 past the route's body
 * limit on the wire or decoded, also for streamed bodies; 408 past `bodyTimeoutMs`; 415 for an
 * unknown Content-Encoding. Only the send routes have a body to read; it is parsed
 * ({@link payloadOf}) once engine/decide.ts has checked its signature on these bytes, as
 * senders sign before content-coding.
 */
export function bodyParser(bodyLimit: BodyLimits, bodyTimeoutMs: number) {
  return async function readBody(ex: Exchange): Promise<void> {
    const route = ex.route!;
    if (ROUTE_METHODS[route.kind] !== 'POST') return;
    ex.raw = await readLimited(ex, bodyLimit(route), bodyTimeoutMs);
  };
}

/**
 * The body as a payload (payload.ts: JSON whatever the Content-Type, form data on mapped hooks,
 * an empty body as `{}`; multipart.ts: a multipart form on mapped hooks; /wake and /agent take JSON).
 */
export function payloadOf(ex: Exchange, maxBytes: number): Record<string, unknown> | Promise<Record<string, unknown>> {
  const type = ex.req.headers['content-type'];
  const mapped = ex.route!.kind === 'mapped';
  return mapped && isMultipart(type) ? parseMultipart(ex.raw!, type, maxBytes) : parsePayload(ex.raw!, type, mapped);
}

/**
 * The body codings a sender may use (RFC 9110 §8.4.1); `deflate` is zlib-wrapped per the RFC,
 * but a raw deflate stream (what some clients send) is told apart by its first two bytes.
 */
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

/** The read of one body, on the request's record (`reading`) while it lasts, so that the request's listeners below can be shared. */
export interface ReadState {
  chunks: Buffer[];
  /** Body bytes kept so far (decoded, when the body is encoded). */
  size: number;
  /** Bytes received on the wire. */
  wire: number;
  limit: number;
  /** How a 413 names the limit (body-limits.ts). */
  limitName: string;
  /** `Date.now()` past which the body is late (408). */
  deadline: number;
  timeoutMs: number;
  resolve: (bytes: Buffer) => void;
  reject: (err: Error) => void;
  /** The Content-Encoding, lower-cased; undefined for identity. */
  encoding: string | undefined;
  /** Made on the first byte (an empty encoded body is an empty body). */
  decoder: (zlib.Zlib & Transform) | undefined;
  /** The body began with the gzip magic bytes 1f 8b (RFC 1952 §2.3.1): see onDecodeError. */
  gzipMagic: boolean;
}

/**
 * Reads the body as bytes, decoded when it came with a Content-Encoding: at most `limit`
 * bytes on the wire and at most `limit` decoded (a compression bomb is stopped at the limit,
 * not inflated), within `timeoutMs`. The request's listeners are module-level functions (the
 * emitter is `this`, its record found from it), not closures made per request: this runs on
 * every accepted request.
 */
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
  const ex = exchangeOf(this);
  const s = ex.reading!;
  s.wire += chunk.length;
  if (s.wire > s.limit) return tooLarge(ex);
  if (s.encoding === undefined) return keep(ex, s, chunk);
  if (!s.decoder) s.decoder = decoderFor(ex, s, chunk);
  if (!s.decoder.write(chunk)) this.pause();
}

/**
 * The decoder of an encoded body, made on its first chunk. Its listeners are closures over the
 * read (an encoded body is rare, and its zlib stream costs far more); each first checks that
 * the read is still the request's: once it is settled (done()), a late event does nothing.
 */
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
  const ex = exchangeOf(this);
  const s = ex.reading!;
  if (s.decoder) s.decoder.end(); // settles in onDecodedEnd or onDecodeError
  else finish(ex);
}

/**
 * The decoder ended: the body is good if the decoder took every byte that arrived. zlib stops
 * at the end of a deflate or brotli stream and drops what follows without a word (its
 * `bytesWritten` counts the input it consumed), while gunzip reads what follows as a next
 * member (RFC 1952 §2.2) and fails on anything else — except NUL padding, which it skips. One
 * rule for the three: nothing may follow the compressed stream.
 */
function onDecodedEnd(ex: Exchange, s: ReadState, d: zlib.Zlib): void {
  if (d.bytesWritten < s.wire) return refuseTrailing(ex);
  finish(ex);
}

function onDecodeError(ex: Exchange, s: ReadState, err: Error): void {
  // gunzip reads bytes after a complete member as a next member, whose magic is then wrong
  // ("incorrect header check": zlib's inflate.c says that of a bad magic only, and the first
  // member's was right), and drops the output of that write, so this is how it is told.
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
    // gunzip can tell before the request ends: do not read the rest.
    ex.req.pause();
    ex.res.setHeader('connection', 'close');
  }
  s.reject(new HookError('invalid_json', `the ${s.encoding} body goes on after the end of its compressed stream: send the compressed stream alone`));
}

function finish(ex: Exchange): void {
  const s = done(ex);
  s.resolve(s.chunks.length === 1 ? s.chunks[0]! : Buffer.concat(s.chunks, s.size));
}

/**
 * Past the limit (on the wire or decoded): answer and close, without keeping or inflating the
 * rest (the answer reads and drops a little more before the close: answer.ts).
 */
function tooLarge(ex: Exchange): void {
  const s = done(ex);
  ex.req.pause();
  ex.res.setHeader('connection', 'close');
  s.reject(new HookError('payload_too_large', `the body is larger than ${s.limitName} (${s.limit} bytes${s.encoding ? ', decoded' : ''})`));
}

// A client that hangs up mid-body: Node emits 'aborted', then 'error' with ECONNRESET
// (IncomingMessage._destroy), so 'error' alone covers it.
function onError(this: IncomingMessage, err: NodeJS.ErrnoException): void {
  done(exchangeOf(this)).reject(err.code === 'ECONNRESET' ? new ClientClosedError() : err);
}

/**
 * The client hung up before its body was complete: not a failure of ours (no 500, nothing to
 * answer — the socket is gone), just something to note in the log.
 */
export class ClientClosedError extends Error {
  constructor() {
    super('the client closed the connection before its body was complete');
    this.name = 'ClientClosedError';
  }
}

/** Ends the read: the request's listeners are removed and the decoder stopped; returns the read to settle. */
function done(ex: Exchange): ReadState {
  const s = ex.reading!;
  ex.reading = undefined;
  const req = ex.req;
  req.off('data', onData);
  req.off('end', onEnd);
  req.off('error', onError);
  unwatch(ex);
  // Stops inflating now (its listeners do nothing from here on).
  s.decoder?.destroy();
  return s;
}

/*
 * hooks.bodyTimeoutMs: one shared timer sweeps the bodies being read, instead of a timer per
 * request; it runs only while some body is being read. A body that is late gets 408 and its
 * connection is closed (the rest of it is never read).
 */
const SWEEP_EVERY_MS = 100;
const reading = new Set<Exchange>();
let sweeper: NodeJS.Timeout | undefined;

function watch(ex: Exchange): void {
  reading.add(ex);
  if (!sweeper) sweeper = setInterval(sweep, SWEEP_EVERY_MS).unref();
}

function unwatch(ex: Exchange): void {
  reading.delete(ex);
}

function sweep(): void {
  // Stopped by the sweep, not by the last unwatch: one-at-a-time traffic keeps one timer.
  if (reading.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
    return;
  }
  const now = Date.now();
  for (const ex of reading) {
    if (ex.reading!.deadline > now) continue;
    const s = done(ex);
    ex.req.pause();
    ex.res.setHeader('connection', 'close');
    s.reject(new HookError('request_timeout', `the body did not arrive within hooks.bodyTimeoutMs (${s.timeoutMs} ms)`));
  }
}
