import type { Context, Next } from 'koa';
import { ERRORS, HookError, errorBody } from '../errors.js';
import type { Logger } from '../log.js';
import { StoreError } from '../store/store.js';
import { ClientClosedError } from './body.js';
import { routeLabel } from './route-label.js';
import { noteError } from './request-log.js';
import { sendJson } from './json.js';

/** Seconds a sender is asked to wait when the store could not take its request. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * First middleware: turns every failure into the contract's JSON error body. A 4xx says
 * what was wrong with the request; a 5xx says only its code's summary — the cause (which may
 * carry payload text) goes to the log (STYLE.md "expose or log", after Koa's ctx.onerror).
 * It also closes the connection of any answer given before the body was read to its end, so
 * that Node does not read (and wait for) the rest of it to keep the connection alive.
 */
export function errorHandler(log: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (caught) {
      if (caught instanceof ClientClosedError) {
        log.info({ route: routeLabel(ctx.res) }, 'client closed the connection before its body was complete');
        return;
      }
      const err = caught instanceof StoreError ? storeUnavailable(caught) : caught;
      const e = err instanceof HookError ? err : undefined;
      const code = e?.code ?? 'internal_error';
      const status = ERRORS[code].status;
      noteError(ctx.res, code);
      if (status >= 500) {
        // A transform's or template's error can quote the payload: its text is logged at
        // debug level only; the error level gets what failed and where.
        const cause = e ? (e as Error & { cause?: unknown }).cause ?? e : err;
        const route = routeLabel(ctx.res);
        log.error({ code, route, what: e?.message, errorType: (cause as Error)?.name }, 'request failed');
        log.debug({ code, route, err: cause }, 'request failed: cause');
      }
      if (e?.headers) ctx.set(e.headers);
      sendJson(ctx, status, errorBody(code, status < 500 && e ? e.message : ERRORS[code].summary));
    } finally {
      if (!ctx.req.complete) ctx.set('connection', 'close');
    }
  };
}

/**
 * A store that failed (disk full, read-only or removed data directory, writer gone) did not
 * commit the request: 503 with Retry-After tells the sender to send it again, where a 500
 * would say the request itself is at fault.
 */
function storeUnavailable(err: StoreError): HookError {
  const e = new HookError('unavailable', 'the store cannot take requests right now; retry later', {
    'retry-after': String(STORE_RETRY_AFTER_SECONDS),
  });
  e.cause = err;
  return e;
}
