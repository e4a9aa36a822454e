import { ERRORS, HookError } from '../errors.js';
import { failureFields, failureText } from '../failure.js';
import type { Logger } from '../log.js';
import { isStoreDown, StoreError } from '../store/store.js';
import { refuse } from './answer.js';
import { ClientClosedError } from './body.js';
import type { Exchange } from './exchange.js';

/** Seconds a sender is asked to wait when the store could not take its request. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * Turns a failure into the contract's JSON error body: a 4xx says what was wrong, a 5xx only its
 * code's summary, the cause going to the log (STYLE.md #5, after Koa's ctx.onerror).
 */
export function answerError(log: Logger, storeProblem: () => string | undefined): (ex: Exchange, caught: unknown) => void {
  return function failed(ex, caught) {
    if (caught instanceof ClientClosedError) {
      log.info({ route: ex.label }, 'client closed the connection before its body was complete');
      return;
    }
    const err = caught instanceof StoreError ? storeUnavailable(storeProblem(), caught) : caught;
    const e = err instanceof HookError ? err : undefined;
    const code = e?.code ?? 'internal_error';
    const status = ERRORS[code].status;
    // A down store is logged by the store, with a count (store/commit-health.ts), not per request.
    const failure = e?.failure;
    if (failure) {
      // A mapping's own failure, said without payload data (CONTRACT.md §16); the request log and the console keep it.
      ex.failures = [...(ex.failures ?? []), failure];
      log.warn({ code, route: ex.label, ...failureFields(failure), cause: failure.code }, `request failed: ${failureText(failure)}`);
    }
    if (status >= 500 && !isStoreDown(caught)) {
      // A transform's or template's error can quote the payload: its text only at debug level.
      const cause = e ? (e as Error & { cause?: unknown }).cause ?? e : err;
      if (!failure) log.error({ code, route: ex.label, what: e?.message, errorType: (cause as Error)?.name }, 'request failed');
      log.debug({ code, route: ex.label, err: cause }, 'request failed: cause');
    }
    // An answer already begun (a stream) cannot be replaced.
    const said = (status < 500 || caught instanceof StoreError) && e ? e.message : ERRORS[code].summary;
    if (!ex.answered) refuse(ex, code, said, e?.headers);
  };
}

/** A store that failed did not commit: 503 with Retry-After, naming why its commits fail (CONTRACT.md §8). */
function storeUnavailable(problem: string | undefined, err: StoreError): HookError {
  const e = new HookError('unavailable', `the store cannot take requests right now${problem ? `: ${problem}` : ''}; retry later`, {
    'retry-after': String(STORE_RETRY_AFTER_SECONDS),
  });
  e.cause = err;
  return e;
}
