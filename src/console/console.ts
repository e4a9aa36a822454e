import type { IncomingMessage } from 'node:http';
import type { DefaultState, Middleware } from 'koa';
import type { MappingConfig } from '../config/types.js';
import type { Engine } from '../engine/engine.js';
import { fixtureContext, type FixtureContext } from '../fixtures/run-fixture.js';
import { HookError } from '../errors.js';
import type { Logger } from '../log.js';
import type { RequestRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { Auth } from '../http/auth.js';
import type { ExchangeContext } from '../http/exchange.js';
import type { Replayed } from '../http/replay.js';
import { consoleRoutes } from './routes.js';
import type { AdminTokenAt } from './pages.js';
import { cookieValue, createSessions, type Sessions } from './session.js';
import { createHostCheck } from './hosts.js';
import { adminCredentials } from '../config/token.js';
import type { ConsoleFactory } from '../http/server.js';

/**
 * Headers of every console answer: a CSP of the console's own files only (no inline script), and
 * `same-origin` referrers, as `no-referrer` makes browsers send `Origin: null` (hosts.ts CSRF).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export interface ConsoleDeps {
  engine: Pick<Engine, 'decide' | 'methods'>;
  store: Pick<Store, 'getRun' | 'listEvents' | 'listRuns' | 'listRequests' | 'getRequest' | 'pauseMapping' | 'flowState'>;
  /** Replays a kept request through the listener (http/replay.ts). */
  replay: (row: RequestRecord) => Promise<Replayed>;
  hooksPath: string;
  mappings: readonly MappingConfig[];
  /** What a request's fixture download runs (fixtures/run-fixture.ts). */
  fixtures: FixtureContext;
  maxBodyBytes: number;
  auth: Auth;
  sessions: Sessions;
  clientAddress: (req: IncomingMessage) => string;
  /** True when the peer is in server.trustedProxies (its X-Forwarded-Proto and X-Forwarded-Host are believed). */
  trustedPeer: (req: IncomingMessage) => boolean;
  /** True when the request names a host the console serves (console/hosts.ts); else 421. */
  servesHost: (req: IncomingMessage) => boolean;
  /** Where the admin token is, for the sign-in page (sign-in.ts). */
  adminTokenAt?: () => AdminTokenAt | undefined;
  log: Logger;
  now?: () => Date;
}

/**
 * The console (CONTRACT.md §11): security headers on every answer, 421 for a host it does not
 * serve, the session cookie verified once, then @koa/router on the gate's parsed path (routes.ts).
 */
export function createConsole(deps: ConsoleDeps): Middleware<DefaultState, ExchangeContext> {
  const routes = consoleRoutes({ ...deps, now: deps.now ?? (() => new Date()) });
  return function handleConsole(ctx, next) {
    const ex = ctx.exchange;
    ctx.set(SECURITY_HEADERS);
    if (!deps.servesHost(ex.req)) {
      throw new HookError('misdirected_request', 'the console answers only for server.host, loopback and server.publicHosts: add the host name you reach it by to server.publicHosts');
    }
    ex.session = deps.sessions.verify(cookieValue(ex.req.headers.cookie), Date.now());
    return routes(ctx, next);
  };
}

/** The console as the listener mounts it, one per config; a new admin token ends every session (session.ts). */
export function consoleFactory(adminTokenAt?: () => AdminTokenAt | undefined): ConsoleFactory {
  let sessions = createSessions();
  let signedWith: string | undefined;
  return {
    mount({ config, deps, auth, clientAddress, trustedPeer, replay, log }) {
      const adminTokens = JSON.stringify(adminCredentials(config.server));
      if (signedWith !== undefined && signedWith !== adminTokens) {
        sessions.endAll();
        sessions = createSessions();
      }
      signedWith = adminTokens;
      const hooks = config.hooks;
      return createConsole({
        engine: deps.engine, store: deps.store, hooksPath: hooks.path, mappings: hooks.mappings, maxBodyBytes: hooks.maxBodyBytes,
        fixtures: fixtureContext(config, deps.engine, deps.now),
        auth, sessions, clientAddress, trustedPeer, log, now: deps.now, replay, adminTokenAt,
        servesHost: createHostCheck(config.server, trustedPeer),
      });
    },
    close: () => sessions.endAll(),
  };
}
