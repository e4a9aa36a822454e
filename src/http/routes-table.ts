import { routeKind, type HookRouteKind, type Target } from '../request-target.js';

/**
 * The one routing decision (STYLE.md #13): every target is parsed once (request-target.ts) and
 * routed here; the gate and @koa/router (router.ts) decide on the same `route.path`, never Koa's
 * `ctx.path`, so what the gate guards and what a handler serves cannot drift apart.
 */
export type RouteKind = HookRouteKind | 'health' | 'metrics' | 'console';

/** The method each kind takes (HEAD rides along with GET); the console's pages answer 405 themselves. */
export const ROUTE_METHODS: Record<RouteKind, string> = {
  wake: 'POST',
  agent: 'POST',
  events: 'GET',
  runs: 'GET',
  run: 'GET',
  // A mapped hook takes its mappings' methods (engine.ts `methods`); POST: body.ts reads its body.
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
 * Target → {@link Route}. `hooksPath` is matched exactly and first, so a hooks path under
 * `/console` stays guarded by the token; `/metrics` and `/console` are routed only when served.
 */
export function createRouting(hooksPath: string, hooksEnabled: boolean, serve: { metrics?: boolean; console?: boolean } = {}): (target: Target) => Route {
  const baseSlash = `${hooksPath}/`;
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
