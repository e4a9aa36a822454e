import type { IncomingMessage } from 'node:http';
import { fold, trustedBy } from '../address-rules.js';

/**
 * The address a request is attributed to (for the auth-failure budget): the peer's, or —
 * only when the peer is a trusted proxy — the right-most untrusted X-Forwarded-For entry
 * (the left-most entries are whatever the client chose to send). `::ffff:1.2.3.4` is folded
 * to `1.2.3.4` so that one client cannot get two budgets.
 */
export function createClientAddress(trustedProxies: readonly string[]): (req: IncomingMessage) => string {
  const isTrusted = trustedBy(trustedProxies);
  return (req) => {
    const peer = fold(req.socket.remoteAddress ?? '');
    if (!isTrusted(peer)) return peer;
    const xff = req.headers['x-forwarded-for'];
    if (typeof xff !== 'string' || xff === '') return peer;
    const hops = xff.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = fold(hops[i].trim());
      if (hop !== '' && !isTrusted(hop)) return hop;
    }
    return peer;
  };
}
