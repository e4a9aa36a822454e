import Koa, { type DefaultState, type Middleware } from 'koa';
import type { Logger } from '../log.js';
import { errorHandler } from './error-handler.js';
import { bodyParser } from './body.js';
import { createBodyLimits, type BodyLimits } from './body-limits.js';
import { exchangeOf, type ExchangeContext } from './exchange.js';
import { readRoutes } from './reads.js';
import { sendHandlers, type RouteDeps } from './routes.js';

/*
 * Koa's role here, in STYLE.md's terms.
 *
 * In front of Koa, on the raw request, the gate (gate.ts) makes the one parse that decides
 * (#13): it routes, checks the method and the credential, refuses oversized bodies, and writes
 * its refusals itself — they are what an attacker sends over and over, so they must cost next
 * to nothing, and a request it refuses never gets a Koa context (the benchmark holds a 401 to
 * 0.8 of a bare node:http server). What it decided goes on the request's one record
 * (exchange.ts), made when the request arrived.
 *
 * Koa then does what it is good at, for the requests the gate let through: a context per
 * request (`ctx.exchange` is the record, defined once on `app.context`) and the middleware in
 * the order of the data flow (#1) — errors → body → the route's handler — with async errors
 * caught in one place. It does not route on its own (`ctx.path` is the raw target): the app
 * picks the part that serves a request by the gate's route kind — the send routes directly,
 * the hot path; the admin reads and the console through @koa/router, on the gate's parsed path
 * (router.ts). And it writes nothing: `respond` is false on every context, and every answer —
 * the gate's, a handler's, the error handler's — goes through the one answer() (answer.ts),
 * whose result the close hook (access-log.ts) records from the record.
 */

/** The app's own deps besides the routes'. */
export interface AppDeps extends RouteDeps {
  maxBodyBytes: number;
  /** The body limit of a route (body-limits.ts); default hooks.maxBodyBytes everywhere. */
  bodyLimit?: BodyLimits;
  bodyTimeoutMs: number;
  log: Logger;
  /** The console's middleware (console/console.ts); absent when the console is off (the gate does not route it then). */
  console?: Middleware<DefaultState, ExchangeContext>;
}

/** The Koa app of one config, for the requests the gate let through. */
export function createApp(deps: AppDeps): Koa<DefaultState, ExchangeContext> {
  const app = new Koa<DefaultState, ExchangeContext>();
  app.silent = true; // errorHandler logs; Koa's default handler would print stacks to stderr
  // https://koajs.com/#app-context: what every ctx inherits.
  Object.defineProperty(app.context, 'exchange', { get(this: Koa.Context) { return exchangeOf(this.req); } });
  // https://koajs.com/#ctx-respond: answer.ts writes every answer.
  (app.context as Partial<Koa.Context>).respond = false;
  (app as unknown as { handleRequest: typeof handleRequest }).handleRequest = handleRequest;
  const send = sendHandlers(deps);
  const reads = readRoutes(deps);
  const onConsole = deps.console;
  app.use(errorHandler(deps.log));
  app.use(bodyParser(deps.bodyLimit ?? createBodyLimits({ maxBodyBytes: deps.maxBodyBytes, mappings: [] }), deps.bodyTimeoutMs, deps.signatures));
  app.use(function byRouteKind(ctx, next) {
    switch (ctx.exchange.route!.kind) {
      case 'wake': return send.wake(ctx);
      case 'agent': return send.agent(ctx);
      case 'mapped': return send.mapped(ctx);
      // The gate routes to `console` only when the console is on (server.console).
      case 'console': return onConsole!(ctx, next);
      // health, events, runs, run, metrics
      default: return reads(ctx, next);
    }
  });
  return app;
}

/**
 * Koa's own `handleRequest` (lib/application.js) without its `onFinished(res, ctx.onerror)`:
 * that arms ee-first listeners on the socket and the response of every request (~1.5 µs, see
 * docs/performance.md) so that a socket error reaches `ctx.onerror`, which in this app does
 * nothing with it — the app is silent, and a response whose socket failed is no longer
 * writable, so `ctx.onerror` returns before answering. What the client's leaving means is
 * recorded by the close hook (access-log.ts). The rest is Koa's: the 404 default, the
 * middleware, its errors to `ctx.onerror`; `respond()` is skipped since `respond` is false.
 */
function handleRequest(ctx: Koa.ParameterizedContext<DefaultState, ExchangeContext>, fn: (ctx: Koa.ParameterizedContext<DefaultState, ExchangeContext>) => Promise<void>): Promise<void> {
  ctx.res.statusCode = 404;
  return fn(ctx).catch((err: Error) => ctx.onerror(err));
}
