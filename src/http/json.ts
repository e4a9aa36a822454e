import type { Context } from 'koa';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Headers of a JSON answer written on the raw response (the gate's, in front of Koa). */
export function jsonHeaders(byteLength: number): Record<string, string> {
  return { 'content-type': JSON_TYPE, 'content-length': String(byteLength) };
}

/**
 * Answers with a JSON body: an object, or text already serialized (`errorBody`). The type goes
 * in as a plain header and the body as a string: Koa's `ctx.type` setter (which
 * `ctx.body = object` calls) looks the type up in mime-types on every request, and Koa would
 * stringify an object body all the same.
 */
export function sendJson(ctx: Context, status: number, body: object | string): void {
  ctx.status = status;
  ctx.set('content-type', JSON_TYPE);
  ctx.body = typeof body === 'string' ? body : JSON.stringify(body);
}
