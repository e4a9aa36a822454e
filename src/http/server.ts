import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import { createAccessLog } from './access-log.js';
import { createApp } from './app.js';
import { createAuth, type Auth } from './auth.js';
import { adminCredentials, hookCredentials } from '../config/token.js';
import { errorBody } from '../errors.js';
import { createClientAddress } from './client-address.js';
import { fold, trustedBy } from '../address-rules.js';
import { createGate } from './gate.js';
import { credentialHeaders } from '../credentials.js';
import { createSignatures } from './signatures.js';
import { jsonHeaders, refuse } from './answer.js';
import { openExchange, type Exchange } from './exchange.js';
import type { RouteDeps } from './routes.js';
import type { DefaultState, Middleware } from 'koa';
import type { ExchangeContext } from './exchange.js';
import type { RequestLogBuffer } from '../store/request-log.js';
import type { Store } from '../store/store.js';
import { createRequestLogger } from './request-log.js';
import { createBodyLimits } from './body-limits.js';
import { createHandshakes } from './handshake.js';
import { createReplayer, type Replayed, type Replayer } from './replay.js';
import type { RequestRecord } from '../store/records.js';

export interface Listener {
  server: http.Server;
  /** The bound address, e.g. `http://127.0.0.1:8788`. */
  url: string;
  /** Stops accepting, lets in-flight requests finish (answering late arrivals 503), resolves when all are done. */
  close(): Promise<void>;
  /**
   * Serves every request that arrives from now on with `config`'s hooks settings (tokens,
   * limits, signature checks) and `deps` (the new engine); the `server` settings stay. Resolves
   * once the requests begun before have finished — on the settings they started with — so
   * that the caller can then close the old engine.
   */
  swap(config: Readonly<Config>, deps: ListenDeps): Promise<void>;
}

/** What the routes need besides the config's own settings; the request log's store side and buffer (store/request-log.ts). */
export type ListenDeps = Omit<RouteDeps, 'hooksPath' | 'acceptStatus' | 'maxWaitSeconds' | 'signatures' | 'store' | 'clientAddress'> & {
  store: RouteDeps['store'] & Pick<Store, 'logRequests' | 'listRequests' | 'getRequest' | 'pauseMapping' | 'flowState' | 'commitProblem'>;
  requestLog: RequestLogBuffer;
  /** The web console (console/console.ts), when `server.console` is on: passed in, so that http/ never imports the console, which is built on http's record, answer and router. */
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
  gate: ReturnType<typeof createGate>;
  auth: Auth;
  tokens: string;
  /** Resolves when no request that entered through this handler is still being handled. */
  drained(): Promise<void>;
}

/**
 * Node checks `server.headersTimeoutMs` and `requestTimeoutMs` every
 * `connectionsCheckingInterval` — 30 s by default, which let a slow client hold a connection
 * for 53 s (headers) and 83 s (body) against limits of 20 and 60 — so it checks every second.
 */
const CHECK_TIMEOUTS_EVERY_MS = 1_000;

/**
 * What the listener keeps on a connection, under one symbol: the record of the last request
 * begun on it (see {@link onClientError}), or {@link REFUSED} for a connection the per-address
 * cap answered 503 — whatever request it still sends is not handled.
 */
const LAST = Symbol('hookrelay.last');
const REFUSED = 'refused';
type Tracked = Socket & { [LAST]?: Exchange | typeof REFUSED };

/** The last request begun on a connection, if it was not refused. */
function lastOn(socket: Socket): Exchange | undefined {
  const last = (socket as Tracked)[LAST];
  return last === REFUSED ? undefined : last;
}

/**
 * The HTTP listener: the gate (routing and cheap rejections on the raw request) in front of
 * the app (app.ts: the send routes, and Koa for the reads and the console), and caps on connections. Resolves once it is listening.
 */
export async function listen(config: Readonly<Config>, deps: ListenDeps, log: Logger): Promise<Listener> {
  const clientAddress = createClientAddress(config.server.trustedProxies);
  const isProxy = trustedBy(config.server.trustedProxies);
  const trustedPeer = (req: http.IncomingMessage) => isProxy(fold(req.socket.remoteAddress ?? ''));
  const requests = createRequestLogger(deps.requestLog, clientAddress);
  let url = '';
  const replayer = createReplayer(() => url, requests);
  let current = createHandler(config, deps, clientAddress, trustedPeer, log, replayer);
  const access = createAccessLog(log, deps.metrics, requests);
  let closing = false;
  const handle = (req: http.IncomingMessage, res: http.ServerResponse, expectsContinue: boolean) => {
    const socket = req.socket as Tracked;
    if (socket[LAST] === REFUSED) return;
    const ex = openExchange(req, res);
    access?.begin(ex);
    socket[LAST] = ex;
    if (closing) {
      refuse(ex, 'unavailable', 'the gateway is shutting down; retry shortly', { connection: 'close', 'retry-after': '1' });
      return;
    }
    current.gate(ex, expectsContinue);
  };
  const server = http.createServer(
    {
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.requestTimeoutMs,
      connectionsCheckingInterval: CHECK_TIMEOUTS_EVERY_MS,
      // Node answers a larger head 431 and closes the connection (its default is 16 KiB too).
      maxHeaderSize: config.server.maxHeaderBytes,
      keepAliveTimeout: 5_000,
    },
    (req, res) => handle(req, res, false),
  );
  // Node answers `Expect: 100-continue` with 100 before any handler runs unless someone
  // listens here; the gate sends it only to a request it lets through, so a refused client
  // never starts sending its body.
  server.on('checkContinue', (req, res) => handle(req, res, true));
  server.on('clientError', onClientError);
  // The open connections, for a stop (close below).
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.maxConnections = config.server.maxConnections;
  capPerAddress(server, config.server.maxConnectionsPerAddress, isProxy, log);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.server.port, config.server.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
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
        // Node closes the connections idle at this moment, and stops timing out the rest
        // (lib/_http_server.js httpServerPreClose clears the headersTimeout check): a connection
        // that has begun no request, or one kept alive after the answer still under way, would
        // hold the stop open for as long as its client likes. The drain ends with the last answer.
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
      current = createHandler(next, nextDeps, clientAddress, trustedPeer, log, replayer, before);
      return before.drained();
    },
  };
}

/**
 * The gate and the app for one config. The failure budget (auth.ts) is kept across a swap
 * that does not change the tokens, so that a reload does not forgive an address its failures.
 */
function createHandler(
  config: Readonly<Config>, deps: ListenDeps, clientAddress: (req: http.IncomingMessage) => string,
  trustedPeer: (req: http.IncomingMessage) => boolean, log: Logger, replayer: Replayer, previous?: Handler,
): Handler {
  const hooks = config.hooks;
  const credentials = { hooks: hooks.enabled ? hookCredentials(hooks) : [], admin: adminCredentials(config.server) };
  // Removing or changing a hooks.tokens entry makes a new Auth: it is refused from the next request on.
  const tokens = JSON.stringify([credentials, hooks.allowQueryToken]);
  const auth = previous?.tokens === tokens ? previous.auth : createAuth(credentials, hooks.allowQueryToken);
  const signatures = createSignatures(hooks.mappings, { auth });
  const bodyLimit = createBodyLimits(hooks);
  const handshakes = createHandshakes(hooks.mappings, { auth, clientAddress });
  // The console takes the admin token: it is there with or without the hooks.
  const consoleOn = config.server.console && credentials.admin.length > 0 && deps.console !== undefined;
  const app = createApp({
    ...deps,
    hooksPath: hooks.path,
    acceptStatus: hooks.acceptStatus,
    maxWaitSeconds: hooks.maxWaitSeconds,
    clientAddress,
    maxBodyBytes: hooks.maxBodyBytes,
    bodyLimit,
    bodyTimeoutMs: hooks.bodyTimeoutMs,
    signatures,
    handshakes,
    log,
    console: consoleOn
      ? deps.console!.mount({
        config, deps, auth, clientAddress, trustedPeer, log,
        // Through whatever config is current when the loopback request arrives (the one of the newest swap).
        replay: (row) => replayer.replay(row, { path: hooks.path, mappings: hooks.mappings }),
      })
      : undefined,
  });
  // Requests the gate let through, until the app is done with them (the engine is only used there).
  let active = 0;
  let onDrained: (() => void) | undefined;
  const settle = () => {
    if (--active === 0) onDrained?.();
  };
  const gate = createGate(
    {
      hooksPath: hooks.path,
      enabled: hooks.enabled,
      console: consoleOn,
      maxBodyBytes: hooks.maxBodyBytes,
      bodyLimit,
      handshakes,
      allowQueryToken: hooks.allowQueryToken,
      metrics: deps.metrics !== undefined,
      auth,
      clientAddress,
      signatureStandsIn: signatures.standsIn,
      mappedMethods: deps.engine.methods,
      keepBodies: hooks.keepBodies,
      credentialHeaders: credentialHeaders(hooks.mappings),
      replayOf: replayer.replayOf,
    },
    (ex) => {
      active++;
      app(ex).then(settle, settle);
    },
  );
  return {
    gate,
    auth,
    tokens,
    drained: () => (active === 0 ? Promise.resolve() : new Promise<void>((resolve) => { onDrained = resolve; })),
  };
}

/** Node's own answers to what its parser refuses (lib/_http_server.js); then the connection is closed. */
const CLIENT_ERROR_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/**
 * What Node does with bytes its parser refuses (a malformed request, a head past
 * `server.maxHeaderBytes`, a time-out), with one change: when they follow a complete request
 * on the same connection — a body longer than its Content-Length — Node would answer 400 at
 * once and close, and the sender of that request, which may have been accepted and stored,
 * would never hear so. Here its answer is sent first, then the 400.
 */
function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const res = lastOn(socket)?.res;
  if (res && !res.writableFinished && res.req.complete && err.code !== 'ERR_HTTP_REQUEST_TIMEOUT') {
    res.once('finish', () => refuseBytes(err, socket));
    res.once('close', () => refuseBytes(err, socket));
    return;
  }
  refuseBytes(err, socket);
}

function refuseBytes(err: NodeJS.ErrnoException, socket: Socket): void {
  if (socket.destroyed) return;
  const res = lastOn(socket)?.res;
  // Never into the middle of an answer (Node's rule too).
  if (socket.writable && !(res && res.headersSent && !res.writableFinished)) socket.write(CLIENT_ERROR_ANSWERS[err.code ?? ''] ?? BAD_REQUEST);
  socket.destroy();
}

/**
 * At most `server.maxConnectionsPerAddress` open connections from one peer address, so that
 * one client cannot hold every connection (`server.maxConnections` caps them all). A trusted
 * proxy speaks for many clients and is not capped. A connection past the cap is answered 503
 * with Retry-After and closed before its request is read.
 */
function capPerAddress(server: http.Server, cap: number, isProxy: (address: string) => boolean, log: Logger): void {
  const body = errorBody('unavailable', `too many connections from this address (server.maxConnectionsPerAddress is ${cap}); retry later`);
  const headers = { ...jsonHeaders(Buffer.byteLength(body)), 'retry-after': '1', connection: 'close' };
  const refusal = `HTTP/1.1 503 Service Unavailable\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = fold(socket.remoteAddress ?? '');
    if (isProxy(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > cap) {
      log.debug({ cap }, 'connection past server.maxConnectionsPerAddress refused');
      (socket as Tracked)[LAST] = REFUSED;
      socket.end(refusal);
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = open.get(address)! - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
