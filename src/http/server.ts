import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import { createApp } from './app.js';
import { createAuth } from './auth.js';
import { createClientAddress } from './client-address.js';
import { createGate, reject } from './gate.js';
import type { RouteDeps } from './routes.js';

export interface Listener {
  server: http.Server;
  /** The bound address, e.g. `http://127.0.0.1:8788`. */
  url: string;
  /** Stops accepting, lets in-flight requests finish (answering late arrivals 503), resolves when all are done. */
  close(): Promise<void>;
}

/**
 * The HTTP listener: the gate (cheap rejections on the raw request) in front of the Koa app.
 * Resolves once it is listening.
 */
export async function listen(
  config: Readonly<Config>,
  deps: Omit<RouteDeps, 'hooksPath' | 'acceptStatus'>,
  log: Logger,
): Promise<Listener> {
  const hooks = config.hooks;
  const app = createApp({
    ...deps,
    hooksPath: hooks.path,
    acceptStatus: hooks.acceptStatus,
    maxBodyBytes: hooks.maxBodyBytes,
    enabled: hooks.enabled,
    log,
  });
  const koa = app.callback();
  let closing = false;
  const gate = createGate(
    {
      hooksPath: hooks.path,
      enabled: hooks.enabled,
      maxBodyBytes: hooks.maxBodyBytes,
      auth: createAuth(hooks.token, hooks.allowQueryToken),
      clientAddress: createClientAddress(config.server.trustedProxies),
    },
    (req, res) => void koa(req, res),
  );
  const server = http.createServer((req, res) => {
    if (closing) {
      reject(res, 'unavailable', 'the gateway is shutting down; retry shortly', { connection: 'close', 'retry-after': '1' });
      return;
    }
    gate(req, res);
  });
  // Senders time out at 10–30 s; a client that trickles its request for longer is not one.
  server.requestTimeout = 60_000;
  server.headersTimeout = 20_000;
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.server.port, config.server.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  return {
    server,
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
