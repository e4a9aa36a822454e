import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { Context, Next } from 'koa';
import { HookError } from '../errors.js';
import { printable } from '../printable.js';
import { routeOf } from './gate.js';
import { parsePayload } from './payload.js';
import { ROUTE_METHODS } from './routes-table.js';
import type { Signatures } from './signatures.js';
import { noteRaw } from './request-log.js';

/**
 * Reads the request body (decoded; 413 past `maxBodyBytes` on the wire or decoded, also for
 * streamed bodies; 408 past `bodyTimeoutMs`) and turns it into the payload (payload.ts: JSON
 * whatever the Content-Type, form data on mapped hooks, an empty body as `{}`).
 */
export function bodyParser(maxBodyBytes: number, bodyTimeoutMs: number, signatures: Pick<Signatures, 'check'>) {
  return async function parseBody(ctx: Context, next: Next): Promise<void> {
    const route = routeOf(ctx.req)!;
    if (ROUTE_METHODS[route.kind] !== 'POST') return next();
    const raw = await readLimited(ctx, maxBodyBytes, bodyTimeoutMs);
    // The bytes stay for idempotency: a key guards exactly what was sent (CONTRACT.md §8).
    ctx.state.raw = raw;
    noteRaw(ctx.res, raw);
    // Signatures are checked on these bytes — the body after Content-Encoding is removed, as
    // senders sign before content-coding — before anything is parsed (signatures.ts); a console
    // replay's too: it goes with its route's checks (CONTRACT.md §11), and the request log keeps
    // no signature headers, so the console does not offer one to a `verify` route.
    ctx.state.signedBy = signatures.check(ctx.req, route, raw);
    ctx.state.body = parsePayload(raw, ctx.req.headers['content-type'], route.kind === 'mapped');
    return next();
  };
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

/** Per-request read state, kept on the request so the listeners below can be shared. */
interface ReadState {
  chunks: Buffer[];
  /** Body bytes kept so far (decoded, when the body is encoded). */
  size: number;
  /** Bytes received on the wire. */
  wire: number;
  limit: number;
  /** `Date.now()` past which the body is late (408). */
  deadline: number;
  timeoutMs: number;
  ctx: Context;
  resolve: (bytes: Buffer) => void;
  reject: (err: Error) => void;
  /** The Content-Encoding, lower-cased; undefined for identity. */
  encoding?: string;
  /** Made on the first byte (an empty encoded body is an empty body). */
  decoder?: zlib.Zlib & Transform;
  /** The body began with the gzip magic bytes 1f 8b (RFC 1952 §2.3.1): see onDecodeError. */
  gzipMagic?: boolean;
}

const READ = Symbol('hookrelay.read');
const OWNER = Symbol('hookrelay.owner');
type Reading = IncomingMessage & { [READ]?: ReadState };
type Decoding = Transform & { [OWNER]?: Reading };

/**
 * Reads the body as bytes, decoded when it came with a Content-Encoding: at most `limit`
 * bytes on the wire and at most `limit` decoded (a compression bomb is stopped at the limit,
 * not inflated), within `timeoutMs`. The listeners are module-level functions (the emitter is
 * `this`), not closures made per request: this runs on every accepted request.
 */
function readLimited(ctx: Context, limit: number, timeoutMs: number): Promise<Buffer> {
  const req = ctx.req as Reading;
  const header = req.headers['content-encoding'];
  let encoding: string | undefined = header?.trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') encoding = undefined;
  if (encoding !== undefined && !Object.hasOwn(DECODERS, encoding)) {
    ctx.set('connection', 'close');
    return Promise.reject(new HookError('unsupported_encoding',
      `Content-Encoding ${JSON.stringify(printable(header!, 40))} is not supported: send the body as identity (no encoding), gzip, deflate or br, one encoding only`));
  }
  return new Promise((resolve, reject) => {
    req[READ] = { chunks: [], size: 0, wire: 0, limit, deadline: Date.now() + timeoutMs, timeoutMs, ctx, resolve, reject, encoding };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    watch(req);
  });
}

function onData(this: Reading, chunk: Buffer): void {
  const s = this[READ]!;
  s.wire += chunk.length;
  if (s.wire > s.limit) return tooLarge(this);
  if (s.encoding === undefined) return keep(this, s, chunk);
  if (!s.decoder) {
    const d = (s.decoder = DECODERS[s.encoding]!(chunk)) as Decoding;
    s.gzipMagic = chunk[0] === 0x1f && chunk[1] === 0x8b;
    d[OWNER] = this;
    d.on('data', onDecoded);
    d.on('end', onDecodedEnd);
    d.on('error', onDecodeError);
    d.on('drain', onDrain);
  }
  if (!s.decoder.write(chunk)) this.pause();
}

function keep(req: Reading, s: ReadState, bytes: Buffer): void {
  s.size += bytes.length;
  if (s.size > s.limit) return tooLarge(req);
  s.chunks.push(bytes);
}

function onEnd(this: Reading): void {
  const s = this[READ]!;
  if (s.decoder) s.decoder.end(); // settles in onDecodedEnd or onDecodeError
  else finish(this);
}

function onDecoded(this: Decoding, bytes: Buffer): void {
  const req = this[OWNER]!;
  keep(req, req[READ]!, bytes);
}

/**
 * The decoder ended: the body is good if the decoder took every byte that arrived. zlib stops
 * at the end of a deflate or brotli stream and drops what follows without a word (its
 * `bytesWritten` counts the input it consumed), while gunzip reads what follows as a next
 * member (RFC 1952 §2.2) and fails on anything else — except NUL padding, which it skips. One
 * rule for the three: nothing may follow the compressed stream.
 */
function onDecodedEnd(this: Decoding): void {
  const req = this[OWNER]!;
  if ((this as unknown as zlib.Zlib).bytesWritten < req[READ]!.wire) return refuseTrailing(req);
  finish(req);
}

function onDecodeError(this: Decoding, err: Error): void {
  const req = this[OWNER]!;
  // gunzip reads bytes after a complete member as a next member, whose magic is then wrong
  // ("incorrect header check": zlib's inflate.c says that of a bad magic only, and the first
  // member's was right), and drops the output of that write, so this is how it is told.
  if (req[READ]!.gzipMagic && err.message === 'incorrect header check') return refuseTrailing(req);
  const s = done(req);
  req.pause();
  // zlib's message says nothing a sender can act on; the connection may hold the rest of the stream.
  s.ctx.set('connection', 'close');
  s.reject(new HookError('invalid_json', `the ${s.encoding} body cannot be decoded`));
}

function refuseTrailing(req: Reading): void {
  const s = done(req);
  if (!req.complete) {
    // gunzip can tell before the request ends: do not read the rest.
    req.pause();
    s.ctx.set('connection', 'close');
  }
  s.reject(new HookError('invalid_json', `the ${s.encoding} body goes on after the end of its compressed stream: send the compressed stream alone`));
}

function onDrain(this: Decoding): void {
  this[OWNER]!.resume();
}

function ignore(): void {}

function finish(req: Reading): void {
  const s = done(req);
  s.resolve(s.chunks.length === 1 ? s.chunks[0]! : Buffer.concat(s.chunks, s.size));
}

/** Past the limit (on the wire or decoded): answer and close, without reading or inflating the rest. */
function tooLarge(req: Reading): void {
  const s = done(req);
  req.pause();
  s.ctx.set('connection', 'close');
  s.reject(new HookError('payload_too_large', `the body is larger than hooks.maxBodyBytes (${s.limit} bytes${s.encoding ? ', decoded' : ''})`));
}

// A client that hangs up mid-body: Node emits 'aborted', then 'error' with ECONNRESET
// (IncomingMessage._destroy), so 'error' alone covers it.
function onError(this: Reading, err: NodeJS.ErrnoException): void {
  done(this).reject(err.code === 'ECONNRESET' ? new ClientClosedError() : err);
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

function done(req: Reading): ReadState {
  const s = req[READ]!;
  req[READ] = undefined;
  req.off('data', onData);
  req.off('end', onEnd);
  req.off('error', onError);
  unwatch(req);
  const d = s.decoder;
  if (d) {
    d.off('data', onDecoded);
    d.off('end', onDecodedEnd);
    d.off('drain', onDrain);
    d.off('error', onDecodeError);
    // Stops inflating now; a late zlib error after destroy() must not be unhandled.
    d.on('error', ignore);
    d.destroy();
  }
  return s;
}

/*
 * hooks.bodyTimeoutMs: one shared timer sweeps the bodies being read, instead of a timer per
 * request; it runs only while some body is being read. A body that is late gets 408 and its
 * connection is closed (the rest of it is never read).
 */
const SWEEP_EVERY_MS = 100;
const reading = new Set<Reading>();
let sweeper: NodeJS.Timeout | undefined;

function watch(req: Reading): void {
  reading.add(req);
  if (!sweeper) sweeper = setInterval(sweep, SWEEP_EVERY_MS).unref();
}

function unwatch(req: Reading): void {
  reading.delete(req);
}

function sweep(): void {
  // Stopped by the sweep, not by the last unwatch: one-at-a-time traffic keeps one timer.
  if (reading.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
    return;
  }
  const now = Date.now();
  for (const req of reading) {
    if (req[READ]!.deadline > now) continue;
    const s = done(req);
    req.pause();
    s.ctx.set('connection', 'close');
    s.reject(new HookError('request_timeout', `the body did not arrive within hooks.bodyTimeoutMs (${s.timeoutMs} ms)`));
  }
}
