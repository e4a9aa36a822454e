import type { IncomingMessage } from 'node:http';
import { HookError } from '../errors.js';

/*
 * Where a console request was sent: the host and scheme the browser used, which the console
 * checks before it answers (421 for a host it does not serve) and on every POST (CSRF).
 */

/** The host a request was sent to, lower-cased: its `Host`, or from a trusted proxy the first `X-Forwarded-Host`. */
export function requestHost(req: IncomingMessage, trustedPeer: (req: IncomingMessage) => boolean): string {
  const forwarded = req.headers['x-forwarded-host'];
  const host = typeof forwarded === 'string' && trustedPeer(req) ? forwarded.split(',')[0]!.trim() : req.headers.host;
  return (host ?? '').toLowerCase();
}

/** Only the hosts served (CONTRACT.md §11): a DNS-rebinding page's `Host` gets 421 (RFC 9110 §15.5.20). */
export function createHostCheck(server: { host: string; publicHosts: readonly string[] }, trustedPeer: (req: IncomingMessage) => boolean): (req: IncomingMessage) => boolean {
  const configured = server.host.includes(':') ? `[${server.host}]` : server.host;
  const local = [...new Set([configured, '127.0.0.1', 'localhost', '[::1]'].map((h) => h.toLowerCase()))];
  const names = new Set<string>();
  const exact = new Set<string>();
  for (const entry of server.publicHosts.map((h) => h.trim().toLowerCase())) {
    if (/:\d+$/.test(entry)) exact.add(entry);
    else names.add(entry);
  }
  return (req) => {
    const host = requestHost(req, trustedPeer);
    if (host === '') return false;
    if (exact.has(host)) return true;
    const portAt = host.lastIndexOf(':');
    const hasPort = portAt > host.lastIndexOf(']');
    const name = hasPort ? host.slice(0, portAt) : host;
    if (names.has(name)) return true;
    return hasPort && host.slice(portAt + 1) === String(req.socket.localPort) && local.includes(name);
  };
}

/** CSRF: a POST must show `Sec-Fetch-Site: same-origin` or this `Origin` (RFC 6454 §5), besides the `SameSite=Strict` cookie. */
export function checkSameOrigin(req: IncomingMessage, trustedPeer: (req: IncomingMessage) => boolean): void {
  const site = req.headers['sec-fetch-site'];
  const origin = req.headers.origin;
  let ok = site === undefined || site === 'same-origin';
  if (origin !== undefined) {
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    // URL.host drops a default port, as a browser's Host does; both are compared lower-cased.
    ok &&= url !== undefined && url.protocol === (isHttps(req, trustedPeer) ? 'https:' : 'http:') && url.host === requestHost(req, trustedPeer);
  }
  if (!ok || (site === undefined && origin === undefined)) {
    throw new HookError('cross_origin', 'a console POST must come from the console\'s own pages (the same Origin, scheme and host, or Sec-Fetch-Site: same-origin)');
  }
}

/** The request reached us over https: TLS on the socket, or a trusted proxy says so. */
export function isHttps(req: IncomingMessage, trustedPeer: (req: IncomingMessage) => boolean): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  const proto = req.headers['x-forwarded-proto'];
  return typeof proto === 'string' && trustedPeer(req) && proto.split(',')[0]!.trim().toLowerCase() === 'https';
}
