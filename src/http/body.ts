import type { Context, Next } from 'koa';
import { HookError } from '../errors.js';
import { dropPrototypeKeys } from '../engine/prototype-keys.js';
import { hookRoute } from './gate.js';

/** Quick test for the only keys that need stripping (a full walk only when one may be there). */
const PROTO_WORD = /__proto__|constructor|prototype/;

/**
 * Reads the request body with a hard byte limit (413 past `maxBodyBytes`, also for streamed
 * bodies without Content-Length) and parses it: JSON whatever the Content-Type, form-urlencoded
 * on mapped hooks, an empty body as `{}`. The result must be an object. Own `__proto__`,
 * `constructor` and `prototype` keys are dropped so no template or transform can resolve them.
 */
export function bodyParser(maxBodyBytes: number) {
  return async function parseBody(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'POST') return next();
    const raw = await readLimited(ctx, maxBodyBytes);
    const route = hookRoute(ctx.req);
    const form = route?.kind === 'mapped' && isForm(ctx.get('content-type'));
    let value: unknown;
    if (form) {
      value = parseForm(raw);
    } else if (raw.trim() === '') {
      value = {};
    } else {
      try {
        value = JSON.parse(raw);
      } catch {
        // V8's message quotes the body, and error bodies never carry payload text.
        throw new HookError('invalid_json', 'the body is not valid JSON');
      }
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new HookError('invalid_payload', 'body: must be a JSON object');
    }
    if (PROTO_WORD.test(raw)) dropPrototypeKeys(value);
    ctx.state.body = value as Record<string, unknown>;
    return next();
  };
}

function isForm(contentType: string): boolean {
  return contentType.toLowerCase().startsWith('application/x-www-form-urlencoded');
}

/** Form fields as an object; a repeated field becomes an array. */
function parseForm(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

function readLimited(ctx: Context, limit: number): Promise<string> {
  const req = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        // Do not drain the rest of an oversized body: answer and close.
        ctx.set('connection', 'close');
        reject(new HookError('payload_too_large', `the body is larger than hooks.maxBodyBytes (${limit} bytes)`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onAborted = () => onError(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
