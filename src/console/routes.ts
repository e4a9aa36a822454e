import type { DefaultState, Middleware } from 'koa';
import type { Config, MappingConfig } from '../config/types.js';
import type { Engine } from '../engine/engine.js';
import { HookError } from '../errors.js';
import type { FixtureContext } from '../fixtures/run-fixture.js';
import { answer } from '../http/answer.js';
import type { Exchange, ExchangeContext } from '../http/exchange.js';
import { createRouter, literal, routesOnParsedPath, type RoutedContext } from '../http/router.js';
import type { ConsoleMount } from '../http/server.js';
import { CONSOLE_PATH } from '../http/routes-table.js';
import type { Store } from '../store/store.js';
import { events, mappings, pauseMapping, run, runs } from './browse.js';
import { streamEvents } from './events-stream.js';
import { checkSameOrigin } from './hosts.js';
import { answerPage, notFoundPage, redirect, type AdminTokenAt } from './pages.js';
import { playground } from './playground.js';
import { diffForm, diffRun } from './diff.js';
import { fixture, replay, request, requests } from './requests.js';
import type { Sessions } from './session.js';
import { login, loginForm, logout } from './sign-in.js';
import { STATIC } from './static.js';

/** What the console's pages need (console.ts makes it from the listener's mount). */
export interface PageDeps extends Pick<ConsoleMount, 'auth' | 'clientAddress' | 'trustedPeer' | 'replay' | 'log'> {
  engine: Pick<Engine, 'decide' | 'methods'>;
  store: Pick<Store, 'getRun' | 'listEvents' | 'listRuns' | 'listRequests' | 'getRequest' | 'pauseMapping' | 'flowState'>;
  hooksPath: string;
  mappings: readonly MappingConfig[];
  /** The config being served: `hookrelay diff`'s current side on the diff page. */
  config: Readonly<Config>;
  /** The dry run of `hookrelay fixture` under the current config, for a request's fixture download. */
  fixtures: FixtureContext;
  maxBodyBytes: number;
  sessions: Sessions;
  /** Where the admin token of the config being served is, for the sign-in page (never the token). */
  adminTokenAt?: () => AdminTokenAt | undefined;
}

/** A page's handler: the request's record is all it reads of the request. */
type Page = (deps: PageDeps, ex: Exchange) => Promise<void> | void;

/** Who may reach a console route: `public`, `page` (else 303 to sign in) or `api` (else 401). */
type Access = 'public' | 'page' | 'api';

type ConsoleRoute = ReturnType<typeof route>;

/** `name`: the part after `/console/` (the gate's `route.name`), `*` one segment; `pages`: the page of each method. */
function route(name: string, access: Access, pages: Readonly<Partial<Record<'GET' | 'POST', Page>>>) {
  return { name, access, pages, methods: Object.keys(pages) as readonly ('GET' | 'POST')[] };
}

/** Every console route: the router's table, and what spec/console/auth.spec.ts walks. */
export const CONSOLE_ROUTES: readonly ConsoleRoute[] = [
  route('', 'page', { GET: runs }),
  route('requests', 'page', { GET: requests }),
  route('requests/*', 'page', { GET: request }),
  route('replay/*', 'page', { POST: replay }),
  route('fixture/*', 'page', { GET: fixture }),
  route('runs', 'page', { GET: runs }),
  route('runs/*', 'page', { GET: run }),
  route('events', 'page', { GET: events }),
  route('events/stream', 'api', { GET: streamEvents }),
  route('mappings', 'page', { GET: mappings }),
  route('pause/*', 'page', { POST: pauseMapping }),
  route('resume/*', 'page', { POST: pauseMapping }),
  route('playground', 'api', { POST: playground }),
  route('diff', 'page', { GET: diffForm, POST: diffRun }),
  route('logout', 'page', { POST: logout }),
  route('login', 'public', { GET: loginForm, POST: login }),
  ...Object.keys(STATIC).map((file) => route(`static/${file}`, 'public', { GET: staticFile })),
];

/** The console's routes, behind their checks ({@link guarded}); no route: sign-in or 404; another method: 405. */
export function consoleRoutes(deps: PageDeps): Middleware<DefaultState, ExchangeContext> {
  const router = createRouter();
  const byPattern = new Map<string, ConsoleRoute>();
  for (const r of CONSOLE_ROUTES) {
    const pattern = r.name === '' ? CONSOLE_PATH : `${CONSOLE_PATH}/${r.name.split('/').map((s) => (s === '*' ? ':id' : literal(s))).join('/')}`;
    byPattern.set(pattern, r);
    for (const method of r.methods) router.register(pattern, [method], guarded(deps, r, r.pages[method]!));
  }
  const routes = routesOnParsedPath(router);
  return (ctx, next) => routes(ctx, async () => notRouted(ctx as RoutedContext, byPattern));
}

/** A route's checks: a POST must come from the console's own pages (hosts.ts), then the session unless public. */
function guarded(deps: PageDeps, r: ConsoleRoute, page: Page) {
  return (ctx: RoutedContext) => {
    const ex = ctx.exchange;
    const post = ex.req.method === 'POST';
    if (post) checkSameOrigin(ex.req, deps.trustedPeer);
    if (r.access !== 'public' && ex.session === undefined) {
      if (r.access === 'page' && !post) return redirect(ex, '/console/login');
      throw new HookError('unauthorized', 'no console session: sign in at /console/login');
    }
    return page(deps, ex);
  };
}

/** No route took the request: another method than its route's (405), or no route at all. */
function notRouted(ctx: RoutedContext, byPattern: ReadonlyMap<string, ConsoleRoute>): void {
  const ex = ctx.exchange;
  const found = ctx.matched?.map((layer) => byPattern.get(String(layer.path))).find((r) => r !== undefined);
  if (found) {
    const allow = found.methods.map((m) => (m === 'GET' ? 'GET, HEAD' : m)).join(', ');
    throw new HookError('method_not_allowed', `${ex.req.method} is not allowed here; use ${allow}`, { allow });
  }
  if (ex.session === undefined) redirect(ex, '/console/login');
  else answerPage(ex, 404, notFoundPage('There is no such page in the console.'));
}

/** A static file of the console, from memory (static.ts). */
function staticFile(_deps: PageDeps, ex: Exchange): void {
  const file = STATIC[ex.route!.name.slice('static/'.length)]!;
  ex.res.setHeader('cache-control', 'no-cache');
  answer(ex, 200, { 'content-type': file.type }, file.bytes);
}
