import { routeKind, type HookRouteKind, type Target } from '../request-target.js';
import type { SendRoute } from '../engine/decide.js';
import type { CredentialKind } from './auth.js';

/** The one routing decision (STYLE.md #13): the gate and @koa/router (router.ts) decide on the same `route.path`, never Koa's `ctx.path`. */
export type RouteKind = HookRouteKind | 'health' | 'metrics' | 'console';

/** The routes that take a POST's body and send work (engine/decide.ts `SendRoute`). */
export const SEND_KINDS: ReadonlySet<RouteKind> = new Set<SendRoute>(['wake', 'agent', 'mapped']);

/**
 * What each kind takes: its methods (HEAD rides along with GET; a mapped hook's are its mappings',
 * body.ts reads a POST's body), its credential (CONTRACT.md §4) and its label in logs and metrics.
 */
export const ROUTE_KINDS: Record<RouteKind, { methods: string; credential: CredentialKind; label: string }> = {
  wake: { methods: 'POST', credential: 'hooks', label: 'wake' },
  agent: { methods: 'POST', credential: 'hooks', label: 'agent' },
  events: { methods: 'GET', credential: 'admin', label: 'events' },
  runs: { methods: 'GET', credential: 'admin', label: 'runs' },
  run: { methods: 'GET', credential: 'admin', label: 'runs' },
  mapped: { methods: 'POST', credential: 'hooks', label: 'unmatched' },
  health: { methods: 'GET', credential: 'either', label: 'healthz' },
  metrics: { methods: 'GET', credential: 'admin', label: 'metrics' },
  console: { methods: 'GET, POST', credential: 'either', label: 'console' },
  none: { methods: '', credential: 'either', label: 'unmatched' },
};

export function mappingLabel(mappingId: string): string {
  return `mapping:${mappingId}`;
}

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
  const allowed = ROUTE_KINDS[kind].methods;
  return method === allowed || (method === 'HEAD' && allowed === 'GET');
}

/** Target → {@link Route}: `hooksPath` first, so a hooks path under `/console` keeps its token. */
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
