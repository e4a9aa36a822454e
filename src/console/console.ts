import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import type { MappingConfig } from '../config/types.js';
import type { Engine } from '../engine/engine.js';
import { HookError } from '../errors.js';
import type { Logger } from '../log.js';
import { RUN_STATUSES, type RunStatus } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { Auth } from '../http/auth.js';
import { sendJson } from '../http/json.js';
import type { Route } from '../http/routes-table.js';
import { dryRun, DryRunProblem } from '../dry-run.js';
import { readBody, formField } from './read-body.js';
import { COOKIE, SESSION_SECONDS, cookieValue, type Sessions } from './session.js';
import { eventsPage, loginPage, mappingsPage, notFoundPage, runPage, runsPage } from './pages.js';
import { requestPage, requestsPage, STATUS_CLASSES, type RequestsFilter } from './requests-pages.js';
import { ReplayRefused, whyNotReplay, type Replayed } from '../http/replay.js';
import type { RequestRecord } from '../store/records.js';
import { lastSeq, streamEvents } from './events-stream.js';
import { STATIC } from './static.js';
import type { Html } from './html.js';
import { checkSameOrigin, isHttps } from './hosts.js';

/**
 * Who may reach a console route: `public` (the sign-in page and its static files), `page`
 * (HTML: without a session, 303 to the sign-in page), `api` (fetch and event stream:
 * without a session, 401).
 */
type Access = 'public' | 'page' | 'api';

interface ConsoleRoute {
  /** The part after `/console/` (the gate's `route.name`); `*` matches one segment. */
  name: string;
  methods: readonly ('GET' | 'POST')[];
  access: Access;
}

/**
 * Every console route, decided on the gate's parsed path (routes-table.ts `console` kind,
 * STYLE.md #13). spec/console/auth.spec.ts walks this list, so a new route cannot be
 * forgotten by the session check's spec.
 */
export const CONSOLE_ROUTES: readonly ConsoleRoute[] = [
  { name: '', methods: ['GET'], access: 'page' },
  { name: 'requests', methods: ['GET'], access: 'page' },
  { name: 'requests/*', methods: ['GET'], access: 'page' },
  { name: 'replay/*', methods: ['POST'], access: 'page' },
  { name: 'runs', methods: ['GET'], access: 'page' },
  { name: 'runs/*', methods: ['GET'], access: 'page' },
  { name: 'events', methods: ['GET'], access: 'page' },
  { name: 'events/stream', methods: ['GET'], access: 'api' },
  { name: 'mappings', methods: ['GET'], access: 'page' },
  { name: 'playground', methods: ['POST'], access: 'api' },
  { name: 'logout', methods: ['POST'], access: 'page' },
  { name: 'login', methods: ['GET', 'POST'], access: 'public' },
  ...Object.keys(STATIC).map((file) => ({ name: `static/${file}`, methods: ['GET'] as const, access: 'public' as const })),
];

function findRoute(name: string): ConsoleRoute | undefined {
  const slash = name.indexOf('/');
  const star = slash === -1 ? name : `${name.slice(0, slash)}/*`;
  return CONSOLE_ROUTES.find((r) => r.name === name) ?? (slash !== -1 && name.indexOf('/', slash + 1) === -1 ? CONSOLE_ROUTES.find((r) => r.name === star) : undefined);
}

/**
 * Headers of every console answer. The CSP allows the console's own files and nothing else:
 * no inline script or style (payload text that slipped through as markup still could not
 * run), no other host, no framing, forms only to the console. The referrer policy is
 * `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` with
 * the console's own POSTs, and the CSRF check below could not tell them from another site's;
 * `same-origin` sends no referrer to any other site either.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export interface ConsoleDeps {
  engine: Pick<Engine, 'map' | 'fanOut'>;
  store: Pick<Store, 'getRun' | 'listEvents' | 'listRuns' | 'listRequests' | 'getRequest'>;
  /** Replays a kept request through the listener (http/replay.ts). */
  replay: (row: RequestRecord) => Promise<Replayed>;
  hooksPath: string;
  mappings: readonly MappingConfig[];
  maxBodyBytes: number;
  auth: Auth;
  sessions: Sessions;
  clientAddress: (req: IncomingMessage) => string;
  /** True when the peer is in server.trustedProxies (its X-Forwarded-Proto and X-Forwarded-Host are believed). */
  trustedPeer: (req: IncomingMessage) => boolean;
  /** True when the request names a host the console serves (console/hosts.ts); else 421. */
  servesHost: (req: IncomingMessage) => boolean;
  log: Logger;
  now?: () => Date;
}

const RUNS_PAGE = 50;
const REQUESTS_PAGE = 50;
const EVENTS_PAGE = 100;
const LOGIN_MAX_BYTES = 4096;

/** The console's handler for the gate's `console` routes (CONTRACT.md §11). */
export function createConsole(deps: ConsoleDeps): (ctx: Context, route: Route) => Promise<void> {
  const now = deps.now ?? (() => new Date());

  async function runs(ctx: Context, route: Route) {
    const params = new URLSearchParams(route.query);
    const status = RUN_STATUSES.includes(params.get('status') as RunStatus) ? (params.get('status') as RunStatus) : undefined;
    const before = params.get('before') || undefined;
    const list = await deps.store.listRuns({ limit: RUNS_PAGE, status, before });
    sendHtml(ctx, 200, runsPage(list, status, before, RUNS_PAGE));
  }

  async function run(ctx: Context, route: Route) {
    const id = route.name.slice('runs/'.length);
    const found = await deps.store.getRun(id);
    if (!found) sendHtml(ctx, 404, notFoundPage('No run with that id (it may have been purged after store.retainDays).'));
    else sendHtml(ctx, 200, runPage(found));
  }

  // The route labels a request can have (http/route-label.ts), for the requests page's filter.
  const routeLabels = ['wake', 'agent', ...deps.mappings.map((m) => `mapping:${m.id}`), 'events', 'runs', 'unmatched'];

  async function requests(ctx: Context, route: Route) {
    const params = new URLSearchParams(route.query);
    const filter: RequestsFilter = {};
    const status = /^([2-5])xx$/.exec(params.get('status') ?? '');
    if (status && STATUS_CLASSES.includes(Number(status[1]) as 2)) filter.statusClass = Number(status[1]);
    const label = params.get('route');
    if (label) filter.route = label;
    const before = Number(params.get('before'));
    if (params.get('before') && Number.isSafeInteger(before)) filter.before = before;
    const list = await deps.store.listRequests({ limit: REQUESTS_PAGE, ...filter });
    sendHtml(ctx, 200, requestsPage(list, filter, routeLabels, REQUESTS_PAGE));
  }

  /** The request-log row that `requests/SEQ` or `replay/SEQ` names; undefined once it has answered 404 for a missing one. */
  async function loggedRequest(ctx: Context, route: Route, prefix: string): Promise<RequestRecord | undefined> {
    const seq = Number(route.name.slice(prefix.length));
    const found = Number.isSafeInteger(seq) ? await deps.store.getRequest(seq) : undefined;
    if (!found) sendHtml(ctx, 404, notFoundPage('No request with that number (it may have been purged after store.retainDays).'));
    return found;
  }

  async function request(ctx: Context, route: Route) {
    const found = await loggedRequest(ctx, route, 'requests/');
    if (found) sendHtml(ctx, 200, requestPage(found, await deps.store.listRequests({ limit: 20, replayOf: found.seq }), whyNotReplay(found, replayHooks)));
  }

  const replayHooks = { path: deps.hooksPath, mappings: deps.mappings };

  /** POST replay/SEQ: the kept request again, to the route it reached, through the current mappings; then the new request's page. */
  async function replay(ctx: Context, route: Route) {
    const found = await loggedRequest(ctx, route, 'replay/');
    if (!found) return;
    const seq = found.seq;
    const refused = whyNotReplay(found, replayHooks);
    if (refused !== undefined) {
      sendHtml(ctx, 409, notFoundPage(`This request cannot be replayed: ${refused}.`, 'Cannot replay'));
      return;
    }
    let done: Replayed;
    try {
      done = await deps.replay(found);
    } catch (err) {
      // The config changed between the check above and the replay (a reload).
      if (err instanceof ReplayRefused) {
        sendHtml(ctx, 409, notFoundPage(err.message, 'Cannot replay'));
        return;
      }
      deps.log.warn({ err, seq }, 'console replay failed');
      sendHtml(ctx, 502, notFoundPage(`The replay could not be sent: ${(err as Error).message}.`, 'Replay failed'));
      return;
    }
    const mine = (await deps.store.listRequests({ limit: 20, replayOf: seq })).find((r) => r.requestId === done.requestId);
    redirect(ctx, `/console/requests/${mine ? mine.seq : seq}`);
  }

  async function events(ctx: Context) {
    const last = await lastSeq(deps.store);
    const list = await deps.store.listEvents(Math.max(0, last - EVENTS_PAGE), EVENTS_PAGE, 1024 * 1024);
    sendHtml(ctx, 200, eventsPage(list, list.length ? list[list.length - 1]!.seq : last));
  }

  async function playground(ctx: Context) {
    // The body is a payload, headers and a query in JSON: room for a payload of maxBodyBytes, escaped.
    const raw = await readBody(ctx.req, deps.maxBodyBytes * 2 + 16 * 1024);
    let input: { name?: unknown; payload?: unknown; headers?: unknown; query?: unknown };
    try {
      input = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new HookError('invalid_json', 'the playground request is not JSON');
    }
    const text = (v: unknown, field: string) => {
      if (v === undefined) return '';
      if (typeof v !== 'string') throw new HookError('invalid_payload', `${field}: must be a string`);
      return v;
    };
    const headers: Record<string, string> = {};
    text(input.headers, 'headers').split(/\r?\n/).forEach((line, i) => {
      if (line.trim() === '') return;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new HookError('invalid_payload', `headers line ${i + 1}: expected "name: value"`);
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    });
    try {
      const output = await dryRun(deps.engine, deps.hooksPath, {
        name: text(input.name, 'name').replace(/^\/+/, ''),
        body: Buffer.from(text(input.payload, 'payload'), 'utf8'),
        headers,
        query: text(input.query, 'query').replace(/^\?/, ''),
        now: now(),
      });
      sendJson(ctx, 200, { ok: true, output });
    } catch (e) {
      if (!(e instanceof DryRunProblem)) throw e;
      // What the mapping refused, as `hookrelay test` says it (without the cause: it stays in the CLI).
      sendJson(ctx, 200, { ok: true, problem: e.message });
    }
  }

  async function login(ctx: Context) {
    if (ctx.method !== 'POST') {
      sendHtml(ctx, 200, loginPage());
      return;
    }
    const token = formField(await readBody(ctx.req, LOGIN_MAX_BYTES), 'token') ?? '';
    const verdict = deps.auth.verify(token, deps.clientAddress(ctx.req), 'admin');
    if (!verdict.ok && verdict.code === 'rate_limited') {
      ctx.set('retry-after', String(verdict.retryAfter));
      sendHtml(ctx, 429, loginPage(`Too many wrong tokens from this address: try again in ${verdict.retryAfter} s.`));
      return;
    }
    if (!verdict.ok) {
      sendHtml(ctx, 401, loginPage('That is not the admin token. It is server.adminToken (or server.adminTokens) in the config, or, when none is configured, the one in {dataDir}/admin-token. A hooks token does not sign in.'));
      return;
    }
    const secure = isHttps(ctx.req, deps.trustedPeer) ? '; Secure' : '';
    ctx.set('set-cookie', `${COOKIE}=${deps.sessions.issue(Date.now())}; Path=/console/; Max-Age=${SESSION_SECONDS}; HttpOnly; SameSite=Strict${secure}`);
    redirect(ctx, '/console/');
  }

  function logout(ctx: Context, _route: Route, session: string) {
    deps.sessions.revoke(session, Date.now());
    ctx.set('set-cookie', `${COOKIE}=; Path=/console/; Max-Age=0; HttpOnly; SameSite=Strict`);
    redirect(ctx, '/console/login');
  }

  const pages: Record<string, (ctx: Context, route: Route, session: string) => Promise<void> | void> = {
    '': runs,
    requests,
    'requests/*': request,
    'replay/*': replay,
    runs,
    'runs/*': run,
    events,
    'events/stream': (ctx, route, session) => streamEvents(ctx, route, session, deps),
    mappings: (ctx) => sendHtml(ctx, 200, mappingsPage(deps.mappings, deps.hooksPath)),
    playground,
    logout,
    login,
  };

  return async function handleConsole(ctx, route) {
    ctx.set(SECURITY_HEADERS);
    // Before anything else, the sign-in page and static files included: nothing of the console for a host it does not serve.
    if (!deps.servesHost(ctx.req)) {
      throw new HookError('misdirected_request', 'the console answers only for server.host, loopback and server.publicHosts: add the host name you reach it by to server.publicHosts');
    }
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    const found = findRoute(route.name);
    const session = deps.sessions.verify(cookieValue(ctx.req.headers.cookie), Date.now());
    if (!found) {
      if (session === undefined) redirect(ctx, '/console/login');
      else sendHtml(ctx, 404, notFoundPage('There is no such page in the console.'));
      return;
    }
    if (!found.methods.includes(method as 'GET')) {
      const allow = found.methods.map((m) => (m === 'GET' ? 'GET, HEAD' : m)).join(', ');
      throw new HookError('method_not_allowed', `${ctx.method} is not allowed here; use ${allow}`, { allow });
    }
    if (method === 'POST') checkSameOrigin(ctx.req, deps.trustedPeer);
    if (found.name.startsWith('static/')) {
      const file = STATIC[found.name.slice('static/'.length)]!;
      ctx.set('content-type', file.type);
      ctx.set('cache-control', 'no-cache');
      ctx.body = file.bytes;
      return;
    }
    if (found.access !== 'public' && session === undefined) {
      if (found.access === 'page' && method === 'GET') redirect(ctx, '/console/login');
      else throw new HookError('unauthorized', 'no console session: sign in at /console/login');
      return;
    }
    await pages[found.name]!(ctx, route, session!);
  };
}

function sendHtml(ctx: Context, status: number, page: Html): void {
  ctx.status = status;
  ctx.set('content-type', 'text/html; charset=utf-8');
  ctx.body = page.text;
}

/** 303: after a POST the browser GETs the target (RFC 9110 §15.4.4). */
function redirect(ctx: Context, location: string): void {
  ctx.status = 303;
  ctx.set('location', location);
  ctx.body = '';
}
