import Router, { type RouterContext } from '@koa/router';
import type { DefaultState, Middleware } from 'koa';
import type { ExchangeContext } from './exchange.js';

/** A router of the app: @koa/router over the app's context (`ctx.exchange`). */
export type AppRouter = Router<DefaultState, ExchangeContext>;

export type RoutedContext = RouterContext<DefaultState, ExchangeContext>;

/** A router that matches as the gate routes: case-sensitive, no optional trailing slash. */
export function createRouter(): AppRouter {
  return new Router<DefaultState, ExchangeContext>({ sensitive: true, strict: true });
}

/** Routes on the gate's parsed path (STYLE.md #13) through @koa/router's `ctx.newRouterPath`; handlers read `route.name`, not params. */
export function routesOnParsedPath(router: AppRouter): Middleware<DefaultState, ExchangeContext> {
  const routes = router.routes();
  return (ctx, next) => {
    (ctx as RoutedContext).newRouterPath = ctx.exchange.route!.path;
    return routes(ctx as RoutedContext, next);
  };
}

/** `text` as a literal part of a route pattern: path-to-regexp's syntax characters escaped. */
export function literal(text: string): string {
  return text.replace(/[{}()[\]+?!:*\\]/g, '\\$&');
}
