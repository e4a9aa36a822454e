import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERRORS, errorBody, type ErrorCode } from '../errors.js';
import { methodAllowed, ROUTE_METHODS, routeKind, type RouteKind } from './routes-table.js';
import type { AuthVerdict } from './auth.js';
import { jsonHeaders } from './json.js';

/** What the gate learnt about a hooks request, handed on to the Koa app. */
export interface HookRoute {
  kind: RouteKind;
  /** The decoded NAME part of `{path}/NAME`. */
  name: string;
  /** Raw query string without `?`. */
  query: string;
}

const ROUTE = Symbol('hookrelay.route');

/** The route the gate attached to a request it let through (undefined outside the hooks path). */
export function hookRoute(req: IncomingMessage): HookRoute | undefined {
  return (req as IncomingMessage & { [ROUTE]?: HookRoute })[ROUTE];
}

export interface GateOptions {
  hooksPath: string;
  enabled: boolean;
  maxBodyBytes: number;
  auth: (req: IncomingMessage, query: string, address: string) => AuthVerdict;
  clientAddress: (req: IncomingMessage) => string;
}

/**
 * The cheap rejections, answered on the raw request before Koa builds a context: they are
 * what an attacker sends, so they must cost next to nothing (the benchmark holds 401 and 413
 * to 0.8 of a bare node:http server). Order, per CONTRACT.md §4: 405 (not counted against
 * the auth budget) → token (401/429, before any byte of the body is read) → 413 on
 * Content-Length. Everything else goes on to the Koa app.
 */
export function createGate(opts: GateOptions, next: (req: IncomingMessage, res: ServerResponse) => void) {
  const base = opts.hooksPath;
  const baseSlash = `${base}/`;
  return function gate(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    if (!opts.enabled || !(pathname === base || pathname.startsWith(baseSlash))) {
      next(req, res);
      return;
    }
    let name = pathname.length > base.length ? pathname.slice(base.length + 1) : '';
    while (name.endsWith('/')) name = name.slice(0, -1);
    if (name.includes('%')) {
      try {
        name = decodeURIComponent(name);
      } catch {
        name = '';
      }
    }
    const kind = routeKind(name);
    const method = req.method ?? 'GET';
    if (kind !== 'none' && !methodAllowed(kind, method)) {
      const allow = ROUTE_METHODS[kind] === 'GET' ? 'GET, HEAD' : ROUTE_METHODS[kind];
      reject(res, 'method_not_allowed', `${method} is not allowed here; use ${allow}`, { allow });
      return;
    }
    const query = q === -1 ? '' : url.slice(q + 1);
    const verdict = opts.auth(req, query, opts.clientAddress(req));
    if (!verdict.ok) {
      if (verdict.code === 'rate_limited') {
        res.writeHead(429, { ...RATE_LIMITED_HEADERS, 'retry-after': String(verdict.retryAfter) });
        res.end(RATE_LIMITED_BODY);
      } else {
        res.writeHead(401, UNAUTHORIZED_HEADERS);
        res.end(UNAUTHORIZED_BODY);
      }
      return;
    }
    const length = req.headers['content-length'];
    if (length !== undefined && Number(length) > opts.maxBodyBytes) {
      // Close: we will not read (or drain) a body we already refused.
      reject(res, 'payload_too_large', `the body is larger than hooks.maxBodyBytes (${opts.maxBodyBytes} bytes)`,
        { connection: 'close' });
      return;
    }
    (req as IncomingMessage & { [ROUTE]?: HookRoute })[ROUTE] = { kind, name, query };
    next(req, res);
  };
}

// 401 and 429 are what a token-guessing client gets over and over: answer from constants.
const UNAUTHORIZED_BODY = Buffer.from(
  errorBody('unauthorized', 'missing or wrong token: send it as Authorization: Bearer <token> or x-hookrelay-token: <token>'),
);
const UNAUTHORIZED_HEADERS = jsonHeaders(UNAUTHORIZED_BODY.length);
const RATE_LIMITED_BODY = Buffer.from(
  errorBody('rate_limited', 'too many failed token attempts from this address; retry later'),
);
const RATE_LIMITED_HEADERS = jsonHeaders(RATE_LIMITED_BODY.length);

/** Answers with the contract's JSON error body, straight on the raw response (no Koa). */
export function reject(res: ServerResponse, code: ErrorCode, message: string, headers?: Record<string, string>): void {
  const body = errorBody(code, message);
  res.writeHead(ERRORS[code].status, { ...jsonHeaders(Buffer.byteLength(body)), ...headers });
  res.end(body);
}
