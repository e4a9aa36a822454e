import Router, { type RouterContext } from '@koa/router';
import type { DefaultState, Middleware } from 'koa';
import type { ExchangeContext } from './exchange.js';

/** A router of the app: @koa/router over the app's context (`ctx.exchange`). */
export type AppRouter = Router<DefaultState, ExchangeContext>;

/** The context a route's handler gets. */
export type RoutedContext = RouterContext<DefaultState, ExchangeContext>;

/**
 * A router that matches as the gate routes (routes-table.ts): case-sensitive, and without
 * @koa/router's optional trailing slash — the gate's paths are normalised and never end in one.
 */
export function createRouter(): AppRouter {
  return new Router<DefaultState, ExchangeContext>({ sensitive: true, strict: true });
}

/**
 * The router's middleware, routing on the gate's parsed path (STYLE.md #13): the path the gate
 * decided on, from the request's record, which @koa/router takes in place of Koa's `ctx.path`
 * (the raw target) when `ctx.newRouterPath` is set. Route patterns never capture what a handler
 * reads: @koa/router percent-decodes its params, and the path is decoded once already — a
 * handler reads an id from `route.name` instead.
 */
export function routesOnParsedPath(router: AppRouter): Middleware<DefaultState, ExchangeContext> {
  const routes = router.routes();
  return (ctx, next) => {
    (ctx as RoutedContext).newRouterPath = ctx.exchange.route!.path;
    return routes(ctx as RoutedContext, next);
  };
}

/**
 * `text` as a literal part of a route pattern: path-to-regexp (which @koa/router compiles its
 * patterns with) reads `:`, `*`, braces, brackets, parentheses, `+`, `?` and `!` as syntax unless
 * escaped with a backslash, and `hooks.path` may hold any of them.
 */
export function literal(text: string): string {
  return text.replace(/[{}()[\]+?!:*\\]/g, '\\$&');
}
