import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestRecord } from '../store/store.js';
import type { RequestLogger } from './request-log.js';

/** The header that marks a console replay; one of the SECRET_HEADERS, so no template, transform or log sees it. */
export const REPLAY_HEADER = 'x-hookrelay-replay';
/** How long a replay waits for its own row in the request log. */
const ROW_WAIT_MS = 5_000;
/** A kept header value that can be sent again as it is (kept values are capped and escaped: a cut one ends with `…`). */
const PLAIN = /^[\x20-\x7e]*$/;

/** What a replay did. */
export interface Replayed {
  /** The new request's X-Request-Id (its row in the request log has it, and `replayOf`). */
  requestId: string;
  status: number;
}

export interface Replayer {
  /** The gate: the seq a request replays when it carries this listener's marker; else undefined. */
  replayOf(req: IncomingMessage): number | undefined;
  /**
   * Sends a kept request again, as a new request, through the listener as it now is: a
   * loopback POST of the kept body with its kept Content-Type and User-Agent and the hooks
   * token, so that it takes the path of every request (gate, body, mappings, dispatch, the
   * request log). Its marker lets it past the mapping's `verify` (the operator vouches for a
   * body that was received) and keeps idempotency keys out of it (a replay is not a repeat).
   * Resolves once the new request's row is stored.
   */
  replay(row: RequestRecord, hooks: { path: string; token: string }): Promise<Replayed>;
}

/**
 * One per listener. The marker is `<nonce>:<seq>`, the nonce random per process and compared
 * in constant time: a request from outside cannot claim to be a replay, and the marker never
 * leaves this machine (loopback).
 */
export function createReplayer(url: () => string, requests: RequestLogger): Replayer {
  const nonce = randomBytes(24).toString('base64url');
  const expected = Buffer.from(nonce);
  return {
    replayOf(req) {
      const marker = req.headers[REPLAY_HEADER];
      if (typeof marker !== 'string') return undefined;
      const colon = marker.lastIndexOf(':');
      const given = Buffer.from(marker.slice(0, colon));
      const seq = Number(marker.slice(colon + 1));
      if (colon < 0 || given.length !== expected.length || !timingSafeEqual(given, expected) || !Number.isSafeInteger(seq)) return undefined;
      return seq;
    },

    async replay(row, hooks) {
      if (row.body === undefined) throw new Error('the request has no kept body');
      if (!row.path.startsWith(`${hooks.path}/`)) throw new Error(`the request went to ${row.path}, no longer under hooks.path (${hooks.path})`);
      const requestId = `replay-${randomBytes(8).toString('hex')}`;
      const stored = requests.stored(requestId, ROW_WAIT_MS);
      const headers: Record<string, string> = {
        authorization: `Bearer ${hooks.token}`,
        'content-type': row.contentType ?? 'application/json',
        'x-request-id': requestId,
        [REPLAY_HEADER]: `${nonce}:${row.seq}`,
      };
      if (row.userAgent !== undefined && PLAIN.test(row.userAgent)) headers['user-agent'] = row.userAgent;
      if (!PLAIN.test(headers['content-type']!)) headers['content-type'] = 'application/json';
      const res = await fetch(`${url()}${encodeURI(row.path)}`, { method: 'POST', headers, body: row.body });
      await res.arrayBuffer();
      await stored;
      return { requestId, status: res.status };
    },
  };
}
