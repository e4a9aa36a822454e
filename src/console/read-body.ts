import type { IncomingMessage } from 'node:http';
import { HookError } from '../errors.js';
import { ClientClosedError } from '../http/body.js';

/** Reads a console POST body up to `limit` bytes, else 413 (the request paused, so the 413 is read: CONTRACT.md §8). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new HookError('payload_too_large', `the body is larger than ${limit} bytes`);
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      req.pause();
      reject(tooLarge());
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    // A client that hangs up mid-body: 'error' with ECONNRESET (http/body.ts).
    const onError = (err: NodeJS.ErrnoException) => {
      stop();
      reject(err.code === 'ECONNRESET' ? new ClientClosedError() : err);
    };
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
