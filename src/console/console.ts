import { fixtureContext } from '../fixtures/run-fixture.js';
import { HookError } from '../errors.js';
import { consoleRoutes, type PageDeps } from './routes.js';
import type { AdminTokenAt } from './pages.js';
import { COOKIE, createSessions } from './session.js';
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

/**
 * The console (CONTRACT.md §11) as the listener mounts it, one per config: security headers on
 * every answer, 421 for a host it does not serve, the session cookie verified once, then
 * @koa/router on the gate's parsed path (routes.ts). A new admin token ends every session.
 */
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
      const pages: PageDeps = {
        engine: deps.engine, store: deps.store, hooksPath: hooks.path, mappings: hooks.mappings, maxBodyBytes: hooks.maxBodyBytes, config,
        fixtures: fixtureContext(config, deps.engine),
        auth, sessions, clientAddress, trustedPeer, log, replay, adminTokenAt,
      };
      const routes = consoleRoutes(pages);
      const servesHost = createHostCheck(config.server, trustedPeer);
      return function handleConsole(ctx, next) {
        const ex = ctx.exchange;
        ctx.set(SECURITY_HEADERS);
        if (!servesHost(ex.req)) {
          throw new HookError('misdirected_request', 'the console answers only for server.host, loopback and server.publicHosts: add the host name you reach it by to server.publicHosts');
        }
        ex.session = pages.sessions.verify(ctx.cookies.get(COOKIE), Date.now());
        return routes(ctx, next);
      };
    },
    close: () => sessions.endAll(),
  };
}
