import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { MappingConfig } from '../config/types.js';
import { digest, type Auth } from './auth.js';
import { answer, refuse } from './answer.js';
import type { Exchange } from './exchange.js';
import { mappingLabel } from './routes-table.js';

/**
 * Meta's verification GET (scheme `meta`, CONTRACT.md §8), answered with no action before any
 * body is read; Slack's signed `url_verification` is the engine's (engine/decide.ts).
 */
export interface Handshakes {
  /** True when NAME has a `meta` mapping: its GET (and HEAD) is Meta's verification request, not a 405. */
  takesGet(name: string): boolean;
  /** Answers Meta's verification GET once the gate checked the credential. https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests */
  answerMeta(ex: Exchange, name: string, query: string): void;
}

/** A `meta` mapping and the digest of its verify.verifyToken (auth.ts digest()). */
type MetaEntry = { id: string; digest: Buffer };

export function createHandshakes(mappings: readonly MappingConfig[], deps: { auth: Auth; clientAddress: (req: IncomingMessage) => string }): Handshakes {
  const meta = new Map<string, MetaEntry[]>();
  for (const m of mappings) {
    const path = m.match.path;
    if (m.verify?.scheme !== 'meta' || m.verify.verifyToken === undefined || path === undefined) continue;
    meta.set(path, [...(meta.get(path) ?? []), { id: m.id, digest: digest(m.verify.verifyToken) }]);
  }

  return {
    takesGet: (name) => meta.has(name),

    answerMeta(ex, name, query) {
      const entries = meta.get(name)!;
      ex.label = mappingLabel(entries[0]!.id);
      const params = new URLSearchParams(query);
      const challenge = params.get('hub.challenge');
      if (params.get('hub.mode') !== 'subscribe') {
        refuse(ex, 'invalid_payload', 'hub.mode must be subscribe: this GET answers Meta\'s verification request, GET {hooks.path}/NAME?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…');
        return;
      }
      if (challenge === null || challenge === '') {
        refuse(ex, 'invalid_payload', 'hub.challenge is missing: Meta\'s verification request sends the challenge to echo');
        return;
      }
      const given = digest(params.get('hub.verify_token') ?? '');
      // Every entry compared, without stopping at a match (auth.ts does the same for tokens).
      let match: MetaEntry | undefined;
      for (const e of entries) match = timingSafeEqual(given, e.digest) ? e : match;
      const reach = ex.sender?.routes;
      if (match && reach !== undefined && !reach.has(match.id)) {
        refuse(ex, 'forbidden', `this hooks token does not reach mapping "${match.id}": add it to the token's routes (hooks.tokens[].routes) or send with another token`);
        return;
      }
      const address = deps.clientAddress(ex.req);
      if (!match) {
        // A failed attempt of its own kind (CONTRACT.md §4, §8).
        const verdict = deps.auth.failed(address, 'verifyToken');
        if (verdict.code === 'rate_limited') {
          refuse(ex, 'rate_limited', 'too many failed attempts from this address; retry later', { 'retry-after': String(verdict.retryAfter) });
          return;
        }
        refuse(ex, 'forbidden', 'hub.verify_token does not match the mapping\'s verify.verifyToken: type the same Verify Token into Meta\'s webhook settings');
        return;
      }
      ex.label = mappingLabel(match.id);
      deps.auth.passed(address, 'verifyToken');
      // Exactly the challenge: Meta compares the body. nosniff: it is the sender's text, shown as text only.
      answer(ex, 200, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }, Buffer.from(challenge));
    },
  };
}
