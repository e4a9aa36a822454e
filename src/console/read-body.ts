import type { IncomingMessage } from 'node:http';
import { HookError } from '../errors.js';
import { ClientClosedError } from '../http/body.js';

/** Reads a console POST body up to `limit` bytes, else 413 (the request paused, so the 413 is read: CONTRACT.md §8). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new HookError('payload_too_large', `the body is larger than ${limit} bytes`);
  if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Leaving the loop early leaves the request open for the 413 (https://nodejs.org/api/stream.html#readableiteratoroptions).
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge();
      chunks.push(chunk);
    }
  } catch (err) {
    // A client that hangs up mid-body: 'error' with ECONNRESET (https://nodejs.org/api/http.html#event-aborted).
    throw (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? new ClientClosedError() : err;
  }
  return Buffer.concat(chunks, size);
}
