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
 * The gate (gate.ts) makes the one parse that decides (STYLE.md #13) and answers its refusals
 * on the raw request; what it lets through comes here with its record (exchange.ts). The send
 * routes run error step → body → route (routes.ts) as plain functions; the admin reads and
 * the console run in Koa (loaded on their first request) with @koa/router on the gate's path.
 * Every answer is written by answer.ts (https://koajs.com/#ctx-respond: `respond` is false).
 */

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

export type AppHandler = (ex: Exchange) => Promise<void>;

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
  app.silent = true; // the error step logs (https://koajs.com/#error-handling)
  Object.defineProperty(app.context, 'exchange', { get(this: Koa.Context) { return exchangeOf(this.req); } });
  // https://koajs.com/#ctx-respond: answer.ts writes every answer.
  (app.context as Partial<Koa.Context>).respond = false;
  const reads = readRoutes(deps);
  const onConsole = deps.console;
  app.use((ctx, next) => guard(ctx.exchange, next));
  app.use(function byRouteKind(ctx, next) {
    if (ctx.exchange.route!.kind === 'console') return onConsole!(ctx, next);
    return reads(ctx, next);
  });
  return app;
}

/** The error step itself failed: a request still unanswered is cut off rather than left waiting. */
function failedAnswering(ex: Exchange, err: unknown, log: Logger): void {
  log.error({ route: ex.label, errorType: (err as Error)?.name }, 'request failed: its answer could not be written');
  if (!ex.answered) ex.res.destroy();
}
