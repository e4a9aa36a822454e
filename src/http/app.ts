import Koa, { type DefaultState, type Middleware } from 'koa';
import type { Logger } from '../log.js';
import { StoreError, type Store } from '../store/store.js';
import { answerJson } from './answer.js';
import { bodyParser } from './body.js';
import type { BodyLimits } from './body-limits.js';
import type { ExchangeContext } from './exchange.js';
import { readRoutes } from './reads.js';
import { createRouter, routesOnParsedPath } from './router.js';
import { SEND_KINDS } from './routes-table.js';
import { sendHandler, type RouteDeps } from './routes.js';

export interface AppDeps extends RouteDeps {
  /** The routes' store; `commitProblem`: /healthz and the 503 answers name why commits fail. */
  store: RouteDeps['store'] & Pick<Store, 'commitProblem'>;
  bodyLimit: BodyLimits;
  bodyTimeoutMs: number;
  log: Logger;
  /** The request's record, id, access log and error answer (server.ts). */
  begin: Middleware<DefaultState, ExchangeContext>;
  /** The one parse that decides (gate.ts, STYLE.md #13): the route, its credential and the refusals before the body. */
  gate: Middleware<DefaultState, ExchangeContext>;
  /** The console's middleware (console/console.ts); absent when the console is off (the gate does not route it then). */
  console?: Middleware<DefaultState, ExchangeContext>;
}

export type App = Koa<DefaultState, ExchangeContext>;

/** The listener's Koa app (CONTRACT.md §5), one per config. */
export function createApp(deps: AppDeps): App {
  const { bodyLimit } = deps;
  const send = sendHandler(deps, bodyLimit);
  const router = createRouter();
  readRoutes(router, deps);
  router.get('/healthz', (ctx) => health(ctx, deps.store.commitProblem()));
  if (deps.console) router.all(['/console', '/console/*rest'], deps.console);
  const routes = routesOnParsedPath(router);

  const app = new Koa<DefaultState, ExchangeContext>();
  app.silent = true; // the first step answers and logs errors (https://koajs.com/#error-handling)
  app.use(deps.begin);
  app.use(deps.gate);
  app.use(bodyParser(bodyLimit, deps.bodyTimeoutMs));
  // The gate's parse already named the route (STYLE.md #13): matching it again would be a second decision.
  app.use((ctx, next) => (SEND_KINDS.has(ctx.exchange.route!.kind) ? send(ctx) : routes(ctx, next)));
  return app;
}

const HEALTHY = JSON.stringify({ ok: true });

/** GET /healthz (CONTRACT.md §5): 200, or while the store's commits fail the 503 that senders get then (§8). */
function health(ctx: { exchange: ExchangeContext['exchange'] }, problem: string | undefined): void {
  if (problem !== undefined) throw new StoreError('unavailable', problem);
  answerJson(ctx.exchange, 200, HEALTHY);
}
