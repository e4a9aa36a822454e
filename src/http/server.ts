import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import { createAccessLog, type AccessLog } from './access-log.js';
import { createApp, type App } from './app.js';
import { createAuth, type Auth } from './auth.js';
import { adminCredentials, hookCredentials } from '../config/token.js';
import { createClientAddress } from './client-address.js';
import { fold, trustedBy } from '../address-rules.js';
import { createGate } from './gate.js';
import { capPerAddress, LAST, onClientError, REFUSED, type Tracked } from './connections.js';
import { createSignatures } from './signatures.js';
import { refuse } from './answer.js';
import { answerError } from './error-handler.js';
import { printable } from '../printable.js';
import { Exchange, type ExchangeContext } from './exchange.js';
import type { RouteDeps } from './routes.js';
import type { DefaultState, Middleware } from 'koa';
import type { RequestLogBuffer } from '../store/request-log.js';
import type { Store } from '../store/store.js';
import { createRequestLogger } from './request-log.js';
import { createBodyLimits } from './body-limits.js';
import { createReplayer, type Replayed, type Replayer } from './replay.js';
import type { RequestRecord } from '../store/records.js';

export interface Listener {
  server: http.Server;
  /** The bound address, e.g. `http://127.0.0.1:8788`. */
  url: string;
  /** Stops accepting, lets in-flight requests finish (answering late arrivals 503), resolves when all are done. */
  close(): Promise<void>;
  /** Serves requests from now on with `config`'s hooks settings and `deps`; resolves once those begun before finished on theirs. */
  swap(config: Readonly<Config>, deps: ListenDeps): Promise<void>;
}

/** What the routes need besides the config's own settings; the request log's store side and buffer (store/request-log.ts). */
export type ListenDeps = Omit<RouteDeps, 'hooksPath' | 'acceptStatus' | 'signatures' | 'store' | 'clientAddress'> & {
  store: RouteDeps['store'] & Pick<Store, 'logRequests' | 'listRequests' | 'getRequest' | 'pauseMapping' | 'flowState' | 'commitProblem'>;
  requestLog: RequestLogBuffer;
  /** The web console (console/console.ts): passed in, as the console is built on http/ and not the reverse. */
  console?: ConsoleFactory;
};

/** What the listener hands the console for one config. */
export interface ConsoleMount {
  config: Readonly<Config>;
  deps: ListenDeps;
  auth: Auth;
  clientAddress: (req: http.IncomingMessage) => string;
  /** True when the peer is in server.trustedProxies. */
  trustedPeer: (req: http.IncomingMessage) => boolean;
  /** Replays a kept request through the listener, with whatever config is current when it arrives (replay.ts). */
  replay: (row: RequestRecord) => Promise<Replayed>;
  log: Logger;
}

/** The console's side of the listener: one console handler per config, and its sessions ended at close. */
export interface ConsoleFactory {
  mount(m: ConsoleMount): Middleware<DefaultState, ExchangeContext>;
  close(): void;
}

/** The part of the listener one config decides (tokens, hooks settings, signatures, engine). */
interface Handler {
  /** The Koa app's request listener (https://koajs.com/#app-callback). */
  serve: ReturnType<App['callback']>;
  auth: Auth;
  tokens: string;
  /** Resolves when no request that entered through this handler is still being handled. */
  drained(): Promise<void>;
}

/** How often Node checks the head and request time-outs (`connectionsCheckingInterval`, 30 s by default). */
const CHECK_TIMEOUTS_EVERY_MS = 1_000;

interface Shared {
  access: AccessLog;
  closing: () => boolean;
  /** Node hands over a request with `Expect: 100-continue` on `checkContinue` (https://nodejs.org/api/http.html#event-checkcontinue). */
  expectsContinue: (req: http.IncomingMessage) => boolean;
}

/** The HTTP listener: the current config's Koa app (app.ts), and caps on connections. Resolves once it is listening. */
export async function listen(config: Readonly<Config>, deps: ListenDeps, log: Logger): Promise<Listener> {
  const clientAddress = createClientAddress(config.server.trustedProxies);
  const isProxy = trustedBy(config.server.trustedProxies);
  const trustedPeer = (req: http.IncomingMessage) => isProxy(fold(req.socket.remoteAddress ?? ''));
  const requests = createRequestLogger(deps.requestLog, clientAddress);
  let url = '';
  const replayer = createReplayer(() => url, requests);
  let closing = false;
  const continuing = new WeakSet<http.IncomingMessage>();
  const shared: Shared = { access: createAccessLog(log, deps.metrics, requests), closing: () => closing, expectsContinue: (req) => continuing.has(req) };
  let current = createHandler(config, deps, clientAddress, trustedPeer, log, replayer, shared);
  const server = http.createServer(
    {
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.requestTimeoutMs,
      connectionsCheckingInterval: CHECK_TIMEOUTS_EVERY_MS,
      // Node answers a larger head 431 and closes the connection (its default is 16 KiB too).
      maxHeaderSize: config.server.maxHeaderBytes,
      keepAliveTimeout: 5_000,
    },
    (req, res) => current.serve(req, res),
  );
  // Node answers `Expect: 100-continue` itself unless this is listened to: the gate continues only what it lets through.
  server.on('checkContinue', (req, res) => {
    continuing.add(req);
    current.serve(req, res);
  });
  server.on('clientError', onClientError);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.maxConnections = config.server.maxConnections;
  capPerAddress(server, config.server.maxConnectionsPerAddress, isProxy, log);

  // once() rejects on the server's 'error' (https://nodejs.org/api/events.html#eventsonceemitter-name-options).
  server.listen(config.server.port, config.server.host);
  await once(server, 'listening');
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  url = `http://${host}:${addr.port}`;

  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        deps.console?.close(); // open event streams would hold their connections forever
        server.close(() => resolve());
        // Node stops timing out the connections it does not close (lib/_http_server.js httpServerPreClose).
        for (const socket of sockets) {
          const last = (socket as Tracked)[LAST];
          if (last === undefined) socket.destroy();
          else if (last === REFUSED) continue; // its refusal closes it
          else if (!last.res.headersSent) last.res.setHeader('connection', 'close');
          else if (!last.res.writableFinished) last.res.once('finish', () => socket.destroySoon());
        }
      }),
    swap(next, nextDeps) {
      const before = current;
      current = createHandler(next, nextDeps, clientAddress, trustedPeer, log, replayer, shared, before);
      return before.drained();
    },
  };
}

/** The app for one config; the failure budget survives a swap that keeps the tokens. */
function createHandler(
  config: Readonly<Config>, deps: ListenDeps, clientAddress: (req: http.IncomingMessage) => string,
  trustedPeer: (req: http.IncomingMessage) => boolean, log: Logger, replayer: Replayer, shared: Shared, previous?: Handler,
): Handler {
  const hooks = config.hooks;
  const credentials = { hooks: hooks.enabled ? hookCredentials(hooks) : [], admin: adminCredentials(config.server) };
  // Removing or changing a hooks.tokens entry makes a new Auth: it is refused from the next request on.
  const tokens = JSON.stringify([credentials, hooks.allowQueryToken]);
  const auth = previous?.tokens === tokens ? previous.auth : createAuth(credentials, hooks.allowQueryToken);
  const signatures = createSignatures(hooks.mappings, { auth, publicUrl: config.server.publicUrl });
  const bodyLimit = createBodyLimits(hooks);
  // The console takes the admin token: it is there with or without the hooks.
  const consoleOn = config.server.console && credentials.admin.length > 0 && deps.console !== undefined;
  const failed = answerError(log, () => deps.store.commitProblem());
  let active = 0;
  let onDrained: (() => void) | undefined;
  const begin: Middleware<DefaultState, ExchangeContext> = async (ctx, next) => {
    const socket = ctx.req.socket as Tracked;
    if (socket[LAST] === REFUSED) {
      ctx.respond = false; // the per-address cap answered on the socket (connections.ts)
      return;
    }
    const ex = new Exchange(ctx);
    shared.access.begin(ex);
    socket[LAST] = ex;
    if (shared.closing()) {
      refuse(ex, 'unavailable', 'the gateway is shutting down; retry shortly', { connection: 'close', 'retry-after': '1' });
      return;
    }
    active++;
    try {
      await next();
      if (!ex.answered) refuse(ex, 'not_found', `no route for ${ex.req.method} ${printable(ex.route?.path ?? '', 200)}`);
    } catch (err) {
      try {
        failed(ex, err);
      } catch (err2) {
        log.error({ route: ex.label, errorType: (err2 as Error)?.name }, 'request failed: its answer could not be written');
        if (!ex.answered) ex.res.destroy();
      }
    } finally {
      if (--active === 0) onDrained?.();
    }
  };
  const gate = createGate({
    hooks,
    console: consoleOn,
    metrics: deps.metrics !== undefined,
    bodyLimit,
    auth,
    clientAddress,
    signatures,
    mappedMethods: deps.engine.methods,
    replayOf: replayer.replayOf,
    expectsContinue: shared.expectsContinue,
  });
  const app = createApp({
    ...deps,
    begin,
    gate,
    hooksPath: hooks.path,
    acceptStatus: hooks.acceptStatus,
    clientAddress,
    bodyLimit,
    bodyTimeoutMs: hooks.bodyTimeoutMs,
    signatures,
    log,
    console: consoleOn
      ? deps.console!.mount({
        config, deps, auth, clientAddress, trustedPeer, log,
        // Through whatever config is current when the loopback request arrives (the one of the newest swap).
        replay: (row) => replayer.replay(row, { path: hooks.path, mappings: hooks.mappings }),
      })
      : undefined,
  });
  return {
    serve: app.callback(),
    auth,
    tokens,
    drained: () => (active === 0 ? Promise.resolve() : new Promise<void>((resolve) => { onDrained = resolve; })),
  };
}
