import type { IncomingMessage } from 'node:http';
import { HookError } from '../errors.js';

/**
 * Reads a console POST body (sign-in form, playground request) up to `limit` bytes: past it,
 * 413. Not the hooks body reader (http/body.ts): no content codings or signatures here, and
 * these bodies never become payloads of a hook.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new HookError('payload_too_large', `the body is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HookError('payload_too_large', `the body is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** One field of an `application/x-www-form-urlencoded` body. */
export function formField(body: Buffer, name: string): string | undefined {
  return new URLSearchParams(body.toString('utf8')).get(name) ?? undefined;
}
