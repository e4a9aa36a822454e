import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '../log.js';
import { errorHandler } from './error-handler.js';
import { bodyParser } from './body.js';
import { hooksRouter, type RouteDeps } from './routes.js';
import { HookError } from '../errors.js';
import { sendJson } from './json.js';

/**
 * The Koa app, in the order of the data flow (STYLE.md): errors → body → routes. Auth and
 * the other cheap rejections already happened in the gate (gate.ts), in front of Koa.
 */
export function createApp(deps: RouteDeps & { maxBodyBytes: number; enabled: boolean; log: Logger }): Koa {
  const app = new Koa();
  app.silent = true; // errorHandler logs; Koa's default handler would print stacks to stderr
  app.use(errorHandler(deps.log));
  app.use(bodyParser(deps.maxBodyBytes));
  if (deps.enabled) app.use(hooksRouter(deps).routes());
  app.use(healthRouter().routes());
  app.use(notFound);
  return app;
}

function healthRouter(): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => sendJson(ctx, 200, { ok: true }));
  return router;
}

async function notFound(ctx: Koa.Context): Promise<void> {
  if (ctx.status === 404 && ctx.body === undefined) throw new HookError('not_found', `no route for ${ctx.method} ${ctx.path}`);
}
