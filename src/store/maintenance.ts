import type { Logger } from '../log.js';
import { StoreError } from './store.js';

/**
 * The store's upkeep: retention (`store.retainDays`), kept request bodies (`hooks.keepBodies`),
 * idempotency keys past their window, and the timers that run them off the request path, as
 * short writes of at most {@link PURGE_BATCH} rows that take turns with the others.
 */

export const PURGE_BATCH = 500;
const DAY_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
const FIRST_PURGE_MAX_MS = 60_000;

export type PurgeTable = 'runs' | 'history' | 'events' | 'outbox';
const PURGE_TABLES: readonly PurgeTable[] = ['runs', 'history', 'events', 'outbox'];

export type PurgeCounts = Record<PurgeTable, number>;

export interface RequestPurgeCounts {
  requests: number;
  bodies: number;
}

/** One purge write's outcome: rows deleted, and where the next resumes (none: nothing more is old enough). */
export interface PurgeStep {
  deleted: number;
  next?: number;
}

/** What a backend gives maintenance: each call one short write of at most `max` rows. */
export interface PurgePort {
  purge(table: PurgeTable | 'requests', before: string, after: number, max: number): Promise<PurgeStep>;
  purgeBodies(now: string, max: number): Promise<number>;
  purgeKeys(before: string, max: number): Promise<number>;
  guard<T>(fn: () => Promise<T>): Promise<T>;
  isOpen(): boolean;
}

/** The config's settings (its schema holds the defaults); the rest are for specs. */
export interface MaintenanceOptions {
  /** `store.retainDays`; 0 keeps everything. */
  retainDays: number;
  idempotencyWindowSeconds: number;
  log: Logger;
  clock?: () => Date;
  /** Default hourly; the first pass runs at most a minute after open. */
  purgeEveryMs?: number;
  keysPurgeEveryMs?: number;
}

export interface Maintenance {
  readonly clock: () => Date;
  keysSince(): string;
  /** One retention pass (CONTRACT.md §3): the request log's part, then ended runs, turns, events, settled outbox rows; one under way is joined. */
  purgeExpired(): Promise<PurgeCounts>;
  purgeExpiredKeys(): Promise<number>;
  stop(): void;
}

/** Starts the timers (they do not keep the process alive). */
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
    purgeExpiredKeys,
    stop: () => timers.forEach((t) => t.stop()),
  };
}

function repeat(port: PurgePort, log: Logger, task: () => Promise<unknown>, firstMs: number, everyMs: number, failed: string): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      if (!port.isOpen()) return;
      task().then(
        () => port.isOpen() && schedule(everyMs),
        (err) => {
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
