import { routeKind, type HookRouteKind, type Target } from '../request-target.js';

/**
 * The one routing decision (STYLE.md #13). Every request's target is parsed and normalised
 * once (`parseTarget`, src/request-target.ts) and routed once, here; the gate decides on the result (405, token, 413) and hands the same {@link Route}
 * to the Koa app on the request's record (`ctx.exchange.route`, http/exchange.ts). The app
 * picks the part that serves it by `route.kind`, and within the read kinds and the console,
 * @koa/router picks the handler on the route's own `path` — the path the gate decided on, never
 * Koa's `ctx.path` or `ctx.url` (the raw target) — so what the gate guards and what a handler
 * serves cannot drift apart.
 */
export type RouteKind = HookRouteKind | 'health' | 'metrics' | 'console';

/**
 * The method each kind takes (HEAD rides along with GET); `none` takes none. The console's
 * pages take GET or POST each: its own table (console/routes.ts) answers 405 for them.
 */
export const ROUTE_METHODS: Record<RouteKind, string> = {
  wake: 'POST',
  agent: 'POST',
  events: 'GET',
  runs: 'GET',
  run: 'GET',
  // A mapped hook takes its mappings' methods (`match.method`, engine.ts `methods`), which the
  // gate asks for; POST here is what body.ts reads a body for.
  mapped: 'POST',
  health: 'GET',
  metrics: 'GET',
  console: 'GET, POST',
  none: '',
};

/** What the gate decided about a request. */
export interface Route {
  kind: RouteKind;
  /** Under `hooks.path`, or `/metrics`: a credential is required (which kind the gate decides from `kind`). */
  hooks: boolean;
  /** Under the hooks path: the decoded part after `{hooks.path}/` (`runs/ID` for a run); under `/console`, the part after `/console/`; else ''. */
  name: string;
  /** The normalised path the decision was made on. */
  path: string;
  /** The raw query string, without `?` — and, once the gate let the request through, without the token. */
  query: string;
}

/** Where the web console lives (CONTRACT.md §11). */
export const CONSOLE_PATH = '/console';
const CONSOLE_SLASH = `${CONSOLE_PATH}/`;

/** True when `method` is taken by a route of this kind (HEAD rides along with GET). */
export function methodAllowed(kind: RouteKind, method: string): boolean {
  const allowed = ROUTE_METHODS[kind];
  return method === allowed || (method === 'HEAD' && allowed === 'GET');
}

/**
 * The router of one listener: target → {@link Route}, or undefined for a target that cannot
 * be parsed. `hooksPath` is the configured base path, matched exactly (case-sensitive); it
 * is decided first, so a hooks path under `/console` stays guarded by the token.
 * `serve.metrics`: `GET /metrics` is served (`server.metrics`; it takes the admin token). `serve.console`: `/console` and everything under it is the console's
 * (`name`: the rest).
 */
export function createRouting(hooksPath: string, hooksEnabled: boolean, serve: { metrics?: boolean; console?: boolean } = {}): (target: Target) => Route {
  const baseSlash = `${hooksPath}/`;
  // It takes the admin token, which is there with or without the hooks.
  const metricsPath = serve.metrics ? '/metrics' : undefined;
  const consoleEnabled = serve.console === true;
  return ({ path, query }) => {
    if (hooksEnabled && (path === hooksPath || path.startsWith(baseSlash))) {
      const name = path.slice(baseSlash.length);
      return { kind: routeKind(name), hooks: true, name, path, query };
    }
    if (path === metricsPath) return { kind: 'metrics', hooks: true, name: '', path, query };
    if (consoleEnabled && (path === CONSOLE_PATH || path.startsWith(CONSOLE_SLASH))) {
      return { kind: 'console', hooks: false, name: path.slice(CONSOLE_SLASH.length), path, query };
    }
    return { kind: path === '/healthz' ? 'health' : 'none', hooks: false, name: '', path, query };
  };
}
