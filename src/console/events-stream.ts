import { setTimeout as sleep } from 'node:timers/promises';
import { answer, answerStream } from '../http/answer.js';
import type { Exchange } from '../http/exchange.js';
import type { Store } from '../store/store.js';
import type { PageDeps } from './routes.js';

/** How often an open stream asks the store for newer events (one indexed read). */
const POLL_MS = 500;
/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
const BATCH = 100;
const BATCH_BYTES = 256 * 1024;

/** `GET /console/events/stream?after=SEQ` (or `Last-Event-ID`): the main session's events as server-sent events. */
export function streamEvents(deps: PageDeps, ex: Exchange): void {
  const session = ex.session!;
  const resume = ex.req.headers['last-event-id'] ?? new URLSearchParams(ex.route!.query).get('after');
  let after = /^\d{1,15}$/.test(String(resume ?? '')) ? Number(resume) : 0;
  if (ex.req.method === 'HEAD') {
    answer(ex, 200, { 'content-type': 'text/event-stream; charset=utf-8' });
    return;
  }
  const res = ex.res;
  // The security headers set before (console.ts) stay: writeHead adds to them.
  answerStream(ex, 200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'x-accel-buffering': 'no', // nginx: do not buffer the stream
  });
  res.write('retry: 2000\n\n');
  const stop = new AbortController();
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const end = () => {
    if (stop.signal.aborted) return;
    stop.abort();
    clearInterval(heartbeat);
    off();
    res.end();
  };
  const off = deps.sessions.onEnd(session, end);
  res.once('close', end);
  // One read at a time, POLL_MS after the last (https://nodejs.org/api/timers.html#timerspromisessettimeoutdelay-value-options).
  void (async () => {
    do {
      try {
        const events = await deps.store.listEvents(after, BATCH, BATCH_BYTES);
        if (stop.signal.aborted) return;
        let out = '';
        for (const e of events) {
          out += `id: ${e.seq}\nevent: event\ndata: ${JSON.stringify({ seq: e.seq, id: e.id, kind: e.kind, text: e.text, source: e.source, at: e.at })}\n\n`;
          after = e.seq;
        }
        if (out !== '') res.write(out);
      } catch (err) {
        deps.log.warn({ errorType: (err as Error)?.name }, 'console event stream: the store could not be read; retrying');
      }
    } while (await sleep(POLL_MS, true, { signal: stop.signal }).catch(() => false));
  })();
}

/** The seq of the newest event (0: none), found by galloping then bisecting: the store pages forward only. */
export async function lastSeq(store: Pick<Store, 'listEvents'>): Promise<number> {
  const next = async (after: number) => (await store.listEvents(after, 1))[0]?.seq;
  let lo = await next(0);
  if (lo === undefined) return 0;
  let step = 1;
  for (let found = await next(lo + step); found !== undefined; found = await next(lo + step)) {
    lo = found;
    step *= 2;
  }
  let hi = lo + step; // no seq is past hi (hi itself may be one); lo is one
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const found = await next(mid);
    if (found === undefined) hi = mid;
    else lo = found;
  }
  return lo;
}
