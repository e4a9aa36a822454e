import type Koa from 'koa';
import type { DefaultState, Middleware } from 'koa';
import type { Logger } from '../log.js';
import { StoreError, type Store } from '../store/store.js';
import { answerJson } from './answer.js';
import { errorHandler } from './error-handler.js';
import { bodyParser } from './body.js';
import { createBodyLimits, type BodyLimits } from './body-limits.js';
import { exchangeOf, type Exchange, type ExchangeContext } from './exchange.js';
import { readRoutes } from './reads.js';
import { sendHandler, type RouteDeps } from './routes.js';

/*
 * Koa's role here, in STYLE.md's terms.
 *
 * In front of everything, on the raw request, the gate (gate.ts) makes the one parse that
 * decides (#13): it routes, checks the method and the credential, refuses oversized bodies,
 * and writes its refusals itself — they are what an attacker sends over and over, so they must
 * cost next to nothing (the benchmark holds a 401 to 0.8 of a bare node:http server). What it
 * decided goes on the request's one record (exchange.ts), made when the request arrived.
 *
 * The send routes (`wake`, `agent`, a mapped hook) are the hot path and need nothing of Koa:
 * their steps are plain functions on the record, in the order of the data flow (#1) — errors
 * (error-handler.ts) → body (body.ts) → the route's handler (routes.ts) — picked by the gate's
 * route kind. A Koa context per request (three objects, its middleware dispatch and its
 * request handling) cost ~5 µs of each accept (docs/performance.md).
 *
 * `/healthz` is answered here too, in one step: a start waits for it (serve.ts).
 *
 * Koa serves the rest, where its router and context earn their keep: the admin reads and the
 * console through @koa/router, on the gate's parsed path (router.ts), behind the same error
 * step (`ctx.exchange` is the record, defined once on `app.context`). Koa is loaded on the
 * first such request: receiving hooks does not need it, and loading it was ~50 ms of every
 * start (docs/performance.md). It writes nothing:
 * `respond` is false on every context, and every answer — the gate's, a handler's, the error
 * step's — goes through the one answer() (answer.ts), whose result the close hook
 * (access-log.ts) records from the record.
 */

/** The app's own deps besides the routes'. */
export interface AppDeps extends RouteDeps {
  /** The routes' store; `commitProblem`: /healthz and the 503 answers name why commits fail. */
  store: RouteDeps['store'] & Pick<Store, 'commitProblem'>;
  maxBodyBytes: number;
  /** The body limit of a route (body-limits.ts); default hooks.maxBodyBytes everywhere. */
  bodyLimit?: BodyLimits;
  bodyTimeoutMs: number;
  log: Logger;
  /** The console's middleware (console/console.ts); absent when the console is off (the gate does not route it then). */
  console?: Middleware<DefaultState, ExchangeContext>;
}

/** Serves a request the gate let through, until it is answered (or its client left). */
export type AppHandler = (ex: Exchange) => Promise<void>;

/** The part of one config that serves the requests the gate let through. */
export function createApp(deps: AppDeps): AppHandler {
  const guard = errorHandler(deps.log, () => deps.store.commitProblem());
  const bodyLimit = deps.bodyLimit ?? createBodyLimits({ maxBodyBytes: deps.maxBodyBytes, mappings: [] });
  const readBody = bodyParser(bodyLimit, deps.bodyTimeoutMs);
  const send = sendHandler(deps, bodyLimit);
  let admin: Promise<ReturnType<Koa['callback']>> | undefined;
  return function app(ex) {
    const kind = ex.route!.kind;
    // What Koa's request handling did: a request nothing answered (its client left first) closes as 404.
    ex.res.statusCode = 404;
    const failed = (err: unknown) => failedAnswering(ex, err, deps.log);
    // GET /healthz (CONTRACT.md §5): 503 while the store's commits fail (§8).
    if (kind === 'health') return guard(ex, async () => health(ex, deps.store.commitProblem())).catch(failed);
    if (kind !== 'wake' && kind !== 'agent' && kind !== 'mapped') {
      admin ??= import('koa').then((m) => koaApp(m.default, deps, guard).callback());
      return admin.then((serve) => serve(ex.req, ex.res)).catch(failed);
    }
    return guard(ex, () => readBody(ex).then(() => send(ex))).catch(failed);
  };
}

const HEALTHY = JSON.stringify({ ok: true });

/** 200, or while the store's commits fail the 503 that senders get then (error-handler.ts). */
function health(ex: Exchange, problem: string | undefined): void {
  if (problem !== undefined) throw new StoreError('unavailable', problem);
  answerJson(ex, 200, HEALTHY);
}

/** The Koa app for the admin reads and the console; `Koa`: the class, loaded on the first request it serves. */
function koaApp(Koa: typeof import('koa'), deps: AppDeps, guard: ReturnType<typeof errorHandler>): Koa<DefaultState, ExchangeContext> {
  const app = new Koa<DefaultState, ExchangeContext>();
  app.silent = true; // the error step logs; Koa's default handler would print stacks to stderr
  // https://koajs.com/#app-context: what every ctx inherits.
  Object.defineProperty(app.context, 'exchange', { get(this: Koa.Context) { return exchangeOf(this.req); } });
  // https://koajs.com/#ctx-respond: answer.ts writes every answer.
  (app.context as Partial<Koa.Context>).respond = false;
  (app as unknown as { handleRequest: typeof handleRequest }).handleRequest = handleRequest;
  const reads = readRoutes(deps);
  const onConsole = deps.console;
  app.use((ctx, next) => guard(ctx.exchange, next));
  app.use(function byRouteKind(ctx, next) {
    // The gate routes to `console` only when the console is on (server.console).
    if (ctx.exchange.route!.kind === 'console') return onConsole!(ctx, next);
    // events, runs, run, metrics
    return reads(ctx, next);
  });
  return app;
}

/**
 * The error step itself failed (its answer could not be written): logged, and a request still
 * unanswered is cut off rather than left waiting — what Koa's `ctx.onerror` did for the Koa routes.
 */
function failedAnswering(ex: Exchange, err: unknown, log: Logger): void {
  log.error({ route: ex.label, errorType: (err as Error)?.name }, 'request failed: its answer could not be written');
  if (!ex.answered) ex.res.destroy();
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
