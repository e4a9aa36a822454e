/**
 * The one routing decision (STYLE.md #13). Every request's target is parsed and normalised
 * once, here; the gate decides on the result (405, token, 413) and hands the same {@link Route}
 * to the Koa app on the request's record (`ctx.exchange.route`, http/exchange.ts). The app
 * picks the part that serves it by `route.kind`, and within the read kinds and the console,
 * @koa/router picks the handler on the route's own `path` — the path the gate decided on, never
 * Koa's `ctx.path` or `ctx.url` (the raw target) — so what the gate guards and what a handler
 * serves cannot drift apart.
 */
export type RouteKind = 'wake' | 'agent' | 'events' | 'runs' | 'run' | 'mapped' | 'health' | 'metrics' | 'console' | 'none';

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

/** Classifies the NAME part of `{hooks.path}/NAME`; also how the loader finds reserved names. */
export function routeKind(name: string): RouteKind {
  if (name === '') return 'none';
  if (name === 'wake') return 'wake';
  if (name === 'agent') return 'agent';
  if (name === 'events') return 'events';
  if (name.startsWith('runs/') && name.length > 5 && name.indexOf('/', 5) === -1) return 'run';
  if (name === 'runs') return 'runs';
  return 'mapped';
}

/** True when `method` is taken by a route of this kind (HEAD rides along with GET). */
export function methodAllowed(kind: RouteKind, method: string): boolean {
  const allowed = ROUTE_METHODS[kind];
  return method === allowed || (method === 'HEAD' && allowed === 'GET');
}

/** The path and query of a request target, normalised. */
export interface Target {
  path: string;
  query: string;
}

// Absolute-form (RFC 9112 §3.2.2), which Node passes on as the raw URL: the authority is ignored.
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
// What only the slow path handles: percent-escapes, backslashes, a fragment, empty or dot
// segments, a trailing slash. Plain paths (nearly every request) skip all of it.
const IRREGULAR = /[%\\#]|\/\/|\/\.\.?(?:\/|$)|.\/$/;
const CONTROL = /\p{Cc}/u;

/**
 * Parses a raw request target into a normalised path and the raw query, or undefined when it
 * cannot be one (not origin- or absolute-form, a bad percent-escape, a control character).
 * The path is percent-decoded once, `\` is read as `/` (as the WHATWG URL parser does for
 * http), empty and `.` segments are dropped and `..` removes its parent (RFC 3986 §5.2.4), so
 * every spelling of a path — `/hooks//wake`, `/x/../hooks/wake`, `/%68ooks/wake`,
 * `http://h/hooks/wake` — is decided on as the one path it names.
 */
export function parseTarget(url: string): Target | undefined {
  let rest = url;
  if (rest.charCodeAt(0) !== 0x2f) {
    const authority = ABSOLUTE.exec(rest);
    if (!authority) return undefined;
    rest = rest.slice(authority[0].length);
    if (rest.charCodeAt(0) !== 0x2f) rest = `/${rest}`;
  }
  const q = rest.indexOf('?');
  let raw = q === -1 ? rest : rest.slice(0, q);
  let query = q === -1 ? '' : rest.slice(q + 1);
  if (!IRREGULAR.test(raw) && !query.includes('#')) return { path: raw, query };
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    // A fragment is never part of the target (RFC 9110 §7.1); a client that sends one anyway
    // means the path before it.
    if (q === -1 || hash < q) [raw, query] = [rest.slice(0, hash), ''];
    else query = query.slice(0, query.indexOf('#'));
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw.replaceAll('\\', '/'));
  } catch {
    return undefined;
  }
  if (CONTROL.test(decoded)) return undefined;
  const segments: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return { path: `/${segments.join('/')}`, query };
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
