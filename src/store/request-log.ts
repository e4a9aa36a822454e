import type { Logger } from '../log.js';
import type { NewRequestLog } from './records.js';
import type { Store } from './store.js';

/** Rows waiting for the next flush at most; past it new rows are dropped (and counted). */
const REQUEST_LOG_MAX_PENDING = 1000;
/** How long a row waits before its batch is written. */
const REQUEST_LOG_FLUSH_MS = 200;

export type RequestLogBuffer = ReturnType<typeof createRequestLog>;

export interface RequestLogOptions {
  maxPending?: number;
  flushMs?: number;
  /** Rows dropped (buffer full, store failed, closed). */
  onDropped?: (rows: number) => void;
  log: Logger;
}

/** The request log's rows of requests that were not accepted (CONTRACT.md §11), batched off the request path. */
export function createRequestLog(store: Pick<Store, 'logRequests'>, opts: RequestLogOptions) {
  const max = opts.maxPending ?? REQUEST_LOG_MAX_PENDING;
  const every = opts.flushMs ?? REQUEST_LOG_FLUSH_MS;
  const pending: NewRequestLog[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let closed = false;
  let warned = false;

  /** Counts `n` rows dropped, also before they were offered (a refusal past its address's budget, http/request-log.ts). */
  const drop = (n: number) => {
    if (n > 0) opts.onDropped?.(n);
  };

  /** Arms the timer when rows wait and no batch is being written (that one re-arms it when done). */
  function kick(): void {
    if (timer === undefined && writing === undefined && pending.length > 0) timer = setTimeout(write, every).unref();
  }

  /** Writes the waiting rows as one batch; never two batches at once, so a stuck store holds one batch at most. */
  function write(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (writing) return writing;
    if (pending.length === 0) return Promise.resolve();
    const rows = pending.splice(0);
    writing = store.logRequests(rows).then(
      () => {
        warned = false;
      },
      (err: unknown) => {
        drop(rows.length);
        // Once per outage, not once per batch.
        if (!warned) opts.log.warn({ err, rows: rows.length }, 'request log: a batch could not be stored and was dropped');
        warned = true;
      },
    ).finally(() => {
      writing = undefined;
      kick();
    });
    return writing;
  }

  return {
    drop,
    /** Queues `make(arg)`, made only when there is room (a flood of refusals costs no rows); false when dropped. */
    offer<T>(make: (arg: T) => NewRequestLog, arg: T): boolean {
      if (closed || pending.length >= max) {
        drop(1);
        return false;
      }
      pending.push(make(arg));
      kick();
      return true;
    },
    /** Writes what is queued now (and waits for a batch under way). */
    async flush(): Promise<void> {
      await writing;
      await write();
    },
    /** Flushes and stops: later rows are dropped. */
    async close(): Promise<void> {
      closed = true;
      await writing;
      await write();
    },
  };
}
