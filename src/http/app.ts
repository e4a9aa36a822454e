import Koa from 'koa';
import type { Logger } from '../log.js';
import { errorHandler } from './error-handler.js';
import { bodyParser } from './body.js';
import { routeOf } from './gate.js';
import { handlers, type Handler, type RouteDeps } from './routes.js';

/**
 * The Koa app, in the order of the data flow (STYLE.md): errors → body → the route's handler.
 * Routing, auth and the other cheap rejections already happened in the gate (gate.ts), in
 * front of Koa: every request that reaches the app carries the gate's route, and the handler
 * is picked by its kind — the app does not route again.
 */
export function createApp(deps: RouteDeps & { maxBodyBytes: number; bodyTimeoutMs: number; log: Logger; console?: Handler }): Koa {
  const app = new Koa();
  app.silent = true; // errorHandler logs; Koa's default handler would print stacks to stderr
  // The gate routes to `console` only when the console is on (server.console).
  const byKind = { ...handlers(deps), console: deps.console! };
  app.use(errorHandler(deps.log));
  app.use(bodyParser(deps.maxBodyBytes, deps.bodyTimeoutMs, deps.signatures));
  app.use((ctx) => {
    const route = routeOf(ctx.req)!;
    return byKind[route.kind as keyof typeof byKind](ctx, route);
  });
  return app;
}
