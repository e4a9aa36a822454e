import type http from 'node:http';
import type { Socket } from 'node:net';
import { fold } from '../address-rules.js';
import { errorBody } from '../errors.js';
import type { Logger } from '../log.js';
import { JSON_HEADERS } from './answer.js';
import type { Exchange } from './exchange.js';

/** A connection's last request ({@link onClientError}), or {@link REFUSED} when the per-address cap answered it. */
export const LAST = Symbol('hookrelay.last');
export const REFUSED = 'refused';
export type Tracked = Socket & { [LAST]?: Exchange | typeof REFUSED };

function lastOn(socket: Socket): Exchange | undefined {
  const last = (socket as Tracked)[LAST];
  return last === REFUSED ? undefined : last;
}

/** Node's own answers to what its parser refuses (lib/_http_server.js); then the connection is closed. */
const CLIENT_ERROR_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/** Node's answer to bytes its parser refuses, but after the answer of a complete request before them (a body past its Content-Length). */
export function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
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

/** At most `server.maxConnectionsPerAddress` per peer but a trusted proxy: one more is answered 503 and closed unread. */
export function capPerAddress(server: http.Server, cap: number, isProxy: (address: string) => boolean, log: Logger): void {
  const body = errorBody('unavailable', `too many connections from this address (server.maxConnectionsPerAddress is ${cap}); retry later`);
  const headers = { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body), 'retry-after': '1', connection: 'close' };
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
