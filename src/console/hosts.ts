import type { IncomingMessage } from 'node:http';

/**
 * The host a request was sent to: its `Host`, or — only when the peer is in
 * `server.trustedProxies` — the first `X-Forwarded-Host` (the name the browser used; a proxy
 * may rewrite `Host` to its upstream's). Lower-cased; '' when there is none.
 */
export function requestHost(req: IncomingMessage, trustedPeer: (req: IncomingMessage) => boolean): string {
  const forwarded = req.headers['x-forwarded-host'];
  const host = typeof forwarded === 'string' && trustedPeer(req) ? forwarded.split(',')[0]!.trim() : req.headers.host;
  return (host ?? '').toLowerCase();
}

/**
 * The console answers only for the hosts it serves (CONTRACT.md §11): a page that a DNS
 * rebinding attack loads from the attacker's name resolved to this address sends that name as
 * `Host`, and gets 421 Misdirected Request (RFC 9110 §15.5.20) instead of the console — which
 * would otherwise be same-origin with the attacker's script. Served: `server.host` and
 * loopback (`127.0.0.1`, `localhost`, `[::1]`), each with the port the connection arrived on,
 * and `server.publicHosts` (`name`: any port; `name:port`: that one).
 */
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
