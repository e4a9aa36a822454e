import type { Logger } from '../log.js';
import { StoreError } from './store.js';

/**
 * The store's upkeep, written once for both backends: retention (`store.retainDays`), the
 * request log's old rows and kept bodies (`hooks.keepBodies`), idempotency keys past
 * `hooks.idempotencyWindowSeconds`, and the timers that run them off the request path. Like
 * svix's queue/mod.rs, which writes its queue's policy once above a backend of a few methods,
 * each backend only gives {@link PurgePort}: one short write per call (sqlite-purge.ts in the
 * writer thread; postgres.ts, one transaction each), and this module decides what to purge,
 * how much at a time, how often, and what to log.
 */

/** Rows one purge write looks at (SQLite) or deletes (PostgreSQL) at most: each write is short, taking turns with the others. */
export const PURGE_BATCH = 500;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How often retention runs: hourly. */
const PURGE_EVERY_MS = 60 * 60 * 1000;
/** The first pass runs this long after open at most (kept bodies expire by their own time, whatever retainDays says). */
const FIRST_PURGE_MAX_MS = 60_000;

/** What retention purges by age, in this order (the request log has its own pass). */
export type PurgeTable = 'runs' | 'history' | 'events' | 'outbox';
const PURGE_TABLES: readonly PurgeTable[] = ['runs', 'history', 'events', 'outbox'];

/** Rows removed by one retention pass. */
export type PurgeCounts = Record<PurgeTable, number>;

/** What one pass did to the request log: rows past store.retainDays, bodies past their time (hooks.keepBodies). */
export interface RequestPurgeCounts {
  requests: number;
  bodies: number;
}

/**
 * One purge write's outcome: rows deleted, and where the next write resumes (`next`), or
 * undefined when the table holds nothing more that is old enough.
 */
export interface PurgeStep {
  deleted: number;
  next?: number;
}

/** What a backend gives maintenance: each call one short write of at most `max` rows. */
export interface PurgePort {
  /** Deletes rows of `table` older than `before` (ISO), looking at rows after `after` (0: from the start). */
  purge(table: PurgeTable | 'requests', before: string, after: number, max: number): Promise<PurgeStep>;
  /** Drops kept request bodies whose time is up at `now` (ISO); resolves to how many. */
  purgeBodies(now: string, max: number): Promise<number>;
  /** Deletes idempotency keys accepted before `before` (ISO), oldest first; resolves to how many. */
  purgeKeys(before: string, max: number): Promise<number>;
  /** Runs a maintenance call as the store runs its own calls (PostgreSQL: close() waits for it). */
  guard<T>(fn: () => Promise<T>): Promise<T>;
  /** False once the store is closing: the timers stop. */
  isOpen(): boolean;
}

/**
 * The policy's settings, resolved: `retainDays` and `idempotencyWindowSeconds` come from the
 * config, whose schema holds their defaults (the loader applies them); the store keeps no
 * defaults of its own. The rest are for specs.
 */
export interface MaintenanceOptions {
  /** `store.retainDays`: ended runs, turns, events and request-log rows older than this many days go; 0 keeps everything. */
  retainDays: number;
  /** `hooks.idempotencyWindowSeconds`: how long a key is kept and answered. */
  idempotencyWindowSeconds: number;
  log: Logger;
  /** What "now" is (specs inject it). */
  clock?: () => Date;
  /** How often retention runs (default hourly); the first pass runs this long after open, at most a minute. */
  purgeEveryMs?: number;
  /** How often keys past the window are purged (default a tenth of the window, 1 s to 10 min). */
  keysPurgeEveryMs?: number;
}

/** A store's running maintenance (see {@link startMaintenance}). */
export interface Maintenance {
  /** What "now" is for the store (the turns it stores, the runs it ends). */
  readonly clock: () => Date;
  /** Keys accepted before this ISO time are past the idempotency window. */
  keysSince(): string;
  /**
   * One retention pass (`store.retainDays`, CONTRACT.md §3): the request log's part, then ended
   * runs, conversation turns, events and settled outbox rows older than that, as a series of
   * small writes ({@link PURGE_BATCH} rows each) that take turns with the other writes, so that
   * requests never wait behind a long delete. Queued and running runs stay. A pass already under
   * way is joined.
   */
  purgeExpired(): Promise<PurgeCounts>;
  /** The request log's part of a pass: rows older than `store.retainDays` (none when 0), then bodies past their time. */
  purgeRequestLog(): Promise<RequestPurgeCounts>;
  /** Deletes idempotency keys older than the window, {@link PURGE_BATCH} at a time. Resolves to how many went. */
  purgeExpiredKeys(): Promise<number>;
  /** Stops the timers (the store is closing). */
  stop(): void;
}

/**
 * Starts a store's maintenance: a retention pass at most a minute after open, then every
 * `purgeEveryMs`, and a key purge every `keysPurgeEveryMs`. Timers do not keep the process alive.
 */
export function startMaintenance(port: PurgePort, opts: MaintenanceOptions): Maintenance {
  const clock = opts.clock ?? (() => new Date());
  const keyWindowMs = opts.idempotencyWindowSeconds * 1000;
  const keysSince = () => new Date(clock().getTime() - keyWindowMs).toISOString();
  const retainedSince = (now = clock()) => new Date(now.getTime() - opts.retainDays * DAY_MS).toISOString();
  let purging: Promise<PurgeCounts> | undefined;

  const purgeRequestLog = () => port.guard(() => {
    const now = clock();
    return requestLogPass(port, opts.log, now, opts.retainDays > 0 ? retainedSince(now) : undefined);
  });
  const purgeExpiredKeys = () => port.guard(() => keysPass(port, opts.log, keysSince()));
  const purgeExpired = (): Promise<PurgeCounts> => {
    purging ??= port.guard(async () => {
      await purgeRequestLog();
      return opts.retainDays > 0 ? retentionPass(port, opts.log, retainedSince()) : { runs: 0, history: 0, events: 0, outbox: 0 };
    }).finally(() => (purging = undefined));
    return purging;
  };

  const purgeEveryMs = opts.purgeEveryMs ?? PURGE_EVERY_MS;
  // A tenth of the window, between a second and ten minutes: a key outlives its window by at
  // most that (it no longer answers once past it; the purge only frees the room).
  const keysEveryMs = opts.keysPurgeEveryMs ?? Math.min(Math.max(keyWindowMs / 10, 1000), 600_000);
  const timers = [
    repeat(port, opts.log, purgeExpired, Math.min(purgeEveryMs, FIRST_PURGE_MAX_MS), purgeEveryMs, 'store retention pass failed; retrying later'),
    repeat(port, opts.log, purgeExpiredKeys, keysEveryMs, keysEveryMs, 'idempotency key purge failed; retrying later'),
  ];
  return {
    clock,
    keysSince,
    purgeExpired,
    purgeRequestLog,
    purgeExpiredKeys,
    stop: () => timers.forEach((t) => t.stop()),
  };
}

/** Repeats `task` after `firstMs`, then every `everyMs` after each run ends, while the store is open; a failure is logged and retried. */
function repeat(port: PurgePort, log: Logger, task: () => Promise<unknown>, firstMs: number, everyMs: number, failed: string): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      if (!port.isOpen()) return;
      task().then(
        () => port.isOpen() && schedule(everyMs),
        (err) => {
          // A closed store stops here; anything else is retried at the next interval.
          if (!(err instanceof StoreError && err.code === 'closed')) log.warn({ err }, failed);
          if (port.isOpen()) schedule(everyMs);
        },
      );
    }, ms);
    timer.unref();
  };
  schedule(firstMs);
  return { stop: () => clearTimeout(timer) };
}

/** Walks a table from the start, a write at a time, until the port says nothing more is old enough; resolves to how many rows went. */
async function purgeTable(port: PurgePort, table: PurgeTable | 'requests', before: string): Promise<number> {
  let deleted = 0;
  let after: number | undefined = 0;
  while (after !== undefined) {
    const step = await port.purge(table, before, after, PURGE_BATCH);
    deleted += step.deleted;
    after = step.next;
  }
  return deleted;
}

/** Repeats a batch write until one takes less than a full batch; resolves to the total. */
async function untilShort(write: (max: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await write(PURGE_BATCH);
    total += n;
    if (n < PURGE_BATCH) return total;
  }
}

async function retentionPass(port: PurgePort, log: Logger, before: string): Promise<PurgeCounts> {
  const counts: PurgeCounts = { runs: 0, history: 0, events: 0, outbox: 0 };
  for (const table of PURGE_TABLES) counts[table] = await purgeTable(port, table, before);
  if (counts.runs + counts.history + counts.events + counts.outbox > 0) log.info({ ...counts, before }, 'store retention: old rows purged');
  return counts;
}

/** `rowsBefore`: the cut-off of store.retainDays, undefined when it keeps everything. */
async function requestLogPass(port: PurgePort, log: Logger, now: Date, rowsBefore: string | undefined): Promise<RequestPurgeCounts> {
  const counts: RequestPurgeCounts = { requests: 0, bodies: 0 };
  if (rowsBefore !== undefined) counts.requests = await purgeTable(port, 'requests', rowsBefore);
  counts.bodies = await untilShort((max) => port.purgeBodies(now.toISOString(), max));
  if (counts.requests + counts.bodies > 0) log.info({ ...counts }, 'store retention: old request-log rows and bodies purged');
  return counts;
}

async function keysPass(port: PurgePort, log: Logger, before: string): Promise<number> {
  const total = await untilShort((max) => port.purgeKeys(before, max));
  if (total > 0) log.info({ deleted: total, before }, 'idempotency keys past the window purged');
  return total;
}
