import { ERRORS, HookError } from '../errors.js';
import type { Logger } from '../log.js';
import { isStoreDown, StoreError } from '../store/store.js';
import { refuse } from './answer.js';
import { ClientClosedError } from './body.js';
import type { Exchange } from './exchange.js';
import { printable } from '../printable.js';

/** Seconds a sender is asked to wait when the store could not take its request. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * Around every request the gate let through (app.ts): runs `next` and turns every failure into
 * the contract's JSON error body, through the one answer() (answer.ts). A 4xx says what was wrong with the request; a 5xx says only its code's
 * summary — the cause (which may carry payload text) goes to the log (STYLE.md "expose or
 * log", after Koa's ctx.onerror). A request that nothing answered (the gate routes nothing the
 * app does not serve, so this is a guard, not a route) gets 404 rather than a connection left
 * waiting: Koa does not respond in this app (app.ts).
 */
export function errorHandler(log: Logger, storeProblem: () => string | undefined) {
  return async function handleErrors(ex: Exchange, next: () => Promise<unknown>): Promise<void> {
    try {
      await next();
      if (!ex.answered) refuse(ex, 'not_found', `no route for ${ex.req.method} ${printable(ex.route?.path ?? '', 200)}`);
    } catch (caught) {
      if (caught instanceof ClientClosedError) {
        log.info({ route: ex.label }, 'client closed the connection before its body was complete');
        return;
      }
      const err = caught instanceof StoreError ? storeUnavailable(storeProblem(), caught) : caught;
      const e = err instanceof HookError ? err : undefined;
      const code = e?.code ?? 'internal_error';
      const status = ERRORS[code].status;
      // A store that cannot commit fails every request at once: the store's own log line says
      // so once every few seconds with a count (store/commit-health.ts), not one per request.
      if (status >= 500 && !isStoreDown(caught)) {
        // A transform's or template's error can quote the payload: its text is logged at
        // debug level only; the error level gets what failed and where.
        const cause = e ? (e as Error & { cause?: unknown }).cause ?? e : err;
        log.error({ code, route: ex.label, what: e?.message, errorType: (cause as Error)?.name }, 'request failed');
        log.debug({ code, route: ex.label, err: cause }, 'request failed: cause');
      }
      // An answer already begun (a stream) cannot be replaced: it is left as it is.
      // The store's 503 names its cause (storeUnavailable): words made for senders, no payload.
      const said = (status < 500 || caught instanceof StoreError) && e ? e.message : ERRORS[code].summary;
      if (!ex.answered) refuse(ex, code, said, e?.headers);
    }
  };
}

/**
 * A store that failed (disk full, read-only or removed data directory, writer gone) did not
 * commit the request: 503 with Retry-After tells the sender to send it again, where a 500
 * would say the request itself is at fault. `problem`: why its commits fail, when they do
 * (Store.commitProblem): the sender and /healthz read the same words (CONTRACT.md §8).
 */
function storeUnavailable(problem: string | undefined, err: StoreError): HookError {
  const e = new HookError('unavailable', `the store cannot take requests right now${problem ? `: ${problem}` : ''}; retry later`, {
    'retry-after': String(STORE_RETRY_AFTER_SECONDS),
  });
  e.cause = err;
  return e;
}
