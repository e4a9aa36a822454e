import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import { HookError } from '../errors.js';
import { routeOf } from './gate.js';
import { parsePayload } from './payload.js';
import { ROUTE_METHODS } from './routes-table.js';

/**
 * Reads the request body with a hard byte limit (413 past `maxBodyBytes`, also for streamed
 * bodies without Content-Length) and turns it into the payload (payload.ts: JSON whatever the
 * Content-Type, form data on mapped hooks, an empty body as `{}`).
 */
export function bodyParser(maxBodyBytes: number) {
  return async function parseBody(ctx: Context, next: Next): Promise<void> {
    const route = routeOf(ctx.req)!;
    if (ROUTE_METHODS[route.kind] !== 'POST') return next();
    const raw = await readLimited(ctx, maxBodyBytes);
    // The bytes stay for idempotency: a key guards exactly what was sent (CONTRACT.md §8).
    ctx.state.raw = typeof raw === 'string' ? Buffer.from(raw) : raw;
    ctx.state.body = parsePayload(ctx.state.raw, ctx.get('content-type'), route.kind === 'mapped');
    return next();
  };
}

/** Per-request read state, kept on the request so the listeners below can be shared. */
interface ReadState {
  chunks: Buffer[];
  size: number;
  limit: number;
  ctx: Context;
  resolve: (bytes: Buffer) => void;
  reject: (err: Error) => void;
}

const READ = Symbol('hookrelay.read');
type Reading = IncomingMessage & { [READ]?: ReadState };

/**
 * Reads the raw body, at most `limit` bytes. The listeners are module-level functions (the
 * emitter is `this`), not closures made per request: this runs on every accepted request.
 */
function readLimited(ctx: Context, limit: number): Promise<Buffer> {
  const req = ctx.req as Reading;
  return new Promise((resolve, reject) => {
    req[READ] = { chunks: [], size: 0, limit, ctx, resolve, reject };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

function onData(this: Reading, chunk: Buffer): void {
  const s = this[READ]!;
  s.size += chunk.length;
  if (s.size > s.limit) {
    done(this);
    this.pause();
    // Do not drain the rest of an oversized body: answer and close.
    s.ctx.set('connection', 'close');
    s.reject(new HookError('payload_too_large', `the body is larger than hooks.maxBodyBytes (${s.limit} bytes)`));
    return;
  }
  s.chunks.push(chunk);
}

function onEnd(this: Reading): void {
  const s = done(this);
  s.resolve(s.chunks.length === 1 ? s.chunks[0] : Buffer.concat(s.chunks, s.size));
}

function onError(this: Reading, err: NodeJS.ErrnoException): void {
  done(this).reject(err.code === 'ECONNRESET' ? new ClientClosedError() : err);
}

function onAborted(this: Reading): void {
  done(this).reject(new ClientClosedError());
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
  req.off('aborted', onAborted);
  return s;
}
