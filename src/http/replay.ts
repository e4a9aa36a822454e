import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { MappingConfig } from '../config/types.js';
import { withoutCredentialParams, withoutCredentials } from '../credentials.js';
import type { RequestRecord } from '../store/records.js';
import { LOGGED_PATH_MAX, type RequestLogger } from './request-log.js';
import { SEND_KINDS, type Route } from './routes-table.js';
import { routeKind } from '../request-target.js';

/** The header that marks a console replay; one of the SECRET_HEADERS, a credential (credentials.ts), so no template, transform or log sees it. */
export const REPLAY_HEADER = 'x-hookrelay-replay';
const ROW_WAIT_MS = 5_000;
/** A kept header value that can be sent again as it is (kept values are capped and escaped: a cut one ends with `…`). */
const PLAIN = /^[\x20-\x7e]*$/;
/** A kept header value fetch sends as it is (a value Node took: tab, visible ASCII, obs-text). */
const SENDABLE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Codes of refusals before the body was read: the request reached no route, so there is nothing to do again. */
const REFUSED_BEFORE_ROUTE = new Set(['unauthorized', 'forbidden', 'rate_limited', 'method_not_allowed', 'invalid_path', 'not_found', 'payload_too_large']);

export interface Replayed {
  requestId: string;
  status: number;
}

export interface ReplayHooks {
  path: string;
  mappings: readonly MappingConfig[];
}

/** Why a logged request cannot be replayed (CONTRACT.md §11), or undefined; the log keeps no signature header, so a signed route cannot be. */
export function whyNotReplay(row: RequestRecord, hooks: ReplayHooks): string | undefined {
  if (row.method !== 'POST') return `only a POST can be replayed (this was a ${row.method})`;
  if (row.error !== undefined && REFUSED_BEFORE_ROUTE.has(row.error)) return `it was refused before its route was reached (${row.error}), so it did nothing to do again`;
  const base = `${hooks.path}/`;
  const name = row.path.startsWith(base) ? row.path.slice(base.length) : undefined;
  if (name === undefined || !SEND_KINDS.has(routeKind(name))) return `it reached no route that takes a POST (${row.path}${name === undefined ? `, not under hooks.path ${hooks.path}` : ''}), so there is none to send it to again`;
  if (row.body === undefined) return 'its body was not kept (hooks.keepBodies) or was purged';
  // printable() cut it (`…` at the cap) or escaped a character (`\xNN`, `\uNNNN`): the route it reached cannot be named again.
  if (row.path.includes('\\') || (row.path.length >= LOGGED_PATH_MAX - 1 && row.path.endsWith('…'))) {
    return 'its logged path was shortened or had characters escaped, so the exact route it reached cannot be named again';
  }
  const verified = hooks.mappings.find((m) => m.verify !== undefined && m.match.path === name);
  if (verified) return `its route checks a signature (mapping ${verified.id}'s verify) and the request log never keeps a signature header: ask the sender to send it again`;
  return undefined;
}

export type Replayer = ReturnType<typeof createReplayer>;

/** One per listener: the marker `<nonce>:<seq>` opens only its request, once, on its path. */
export function createReplayer(url: () => string, requests: RequestLogger) {
  const nonce = randomBytes(24).toString('base64url');
  const expected = Buffer.from(nonce);
  const sending = new Map<string, { seq: number; path: string }>();
  return {
    /** The gate: the seq a request replays when it carries this listener's marker for exactly `route`; its credential there. */
    replayOf(req: IncomingMessage, route: Route): number | undefined {
      const marker = req.headers[REPLAY_HEADER];
      const id = req.headers['x-request-id'];
      if (typeof marker !== 'string' || typeof id !== 'string') return undefined;
      const colon = marker.lastIndexOf(':');
      const given = Buffer.from(marker.slice(0, colon));
      const seq = Number(marker.slice(colon + 1));
      if (colon < 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      // Only a send route: a marker never opens a read route, whatever its path.
      if (!SEND_KINDS.has(route.kind)) return undefined;
      const entry = sending.get(id);
      if (entry === undefined || entry.seq !== seq || entry.path !== route.path) return undefined;
      sending.delete(id);
      return seq;
    },

    /** Sends a kept request that {@link whyNotReplay} lets through again through the listener; its marker stands in for the token and keeps idempotency keys out (a replay is no repeat). */
    async replay(row: RequestRecord, hooks: ReplayHooks): Promise<Replayed> {
      const requestId = `replay-${randomBytes(8).toString('hex')}`;
      const stored = requests.stored(requestId, ROW_WAIT_MS);
      // Cleaned again under the current mappings: a verify.header added since is a credential too.
      const kept = Object.entries(withoutCredentials({ headers: row.headers ?? {} }, hooks.mappings).headers).filter(([k, v]) => k !== 'x-request-id' && SENDABLE.test(v));
      const headers: Record<string, string> = {
        'content-type': row.contentType ?? 'application/json',
        ...Object.fromEntries(kept),
        'x-request-id': requestId,
        [REPLAY_HEADER]: `${nonce}:${row.seq}`,
      };
      if (row.headers === undefined && row.userAgent !== undefined && PLAIN.test(row.userAgent)) headers['user-agent'] = row.userAgent;
      if (!PLAIN.test(headers['content-type']!)) headers['content-type'] = 'application/json';
      // Each segment escaped whole, `?` and `#` too: the gate's one parse decodes it back to the logged path.
      const query = withoutCredentialParams(row.query ?? '');
      const target = row.path.split('/').map(encodeURIComponent).join('/') + (query === '' ? '' : `?${query}`);
      sending.set(requestId, { seq: row.seq, path: row.path });
      try {
        const res = await fetch(`${url()}${target}`, { method: 'POST', headers, body: row.body });
        await res.arrayBuffer();
        await stored;
        return { requestId, status: res.status };
      } finally {
        sending.delete(requestId);
      }
    },
  };
}
