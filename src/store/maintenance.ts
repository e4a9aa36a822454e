import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { StoreError } from './store.js';
import type { WriteOp } from './writes.js';

/**
 * The store's upkeep: retention (`store.retainDays`), kept request bodies (`hooks.keepBodies`),
 * idempotency keys past their window, and the timers that run them off the request path, as
 * short writes of at most {@link PURGE_BATCH} rows that take turns with the others, each
 * followed by a rest, so that upkeep takes at most {@link UPKEEP_SHARE} of the writer's time.
 */

export const PURGE_BATCH = 500;
export const UPKEEP_SHARE = 0.25;
const DAY_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
const FIRST_PURGE_MAX_MS = 60_000;

const PURGE_TABLES = ['runs', 'history', 'events', 'outbox'] as const;
export type PurgeTable = (typeof PURGE_TABLES)[number];

export type PurgeCounts = Record<PurgeTable, number>;

/** One purge write's outcome: rows deleted, and where the next resumes (none: nothing more is old enough). */
export interface PurgeStep {
  deleted: number;
  next?: number;
}

/** What a store gives maintenance: `write` commits one purge op, a short write of at most its `max` rows. */
export interface PurgePort {
  write<T>(op: Extract<WriteOp, { kind: 'purge' | 'purgeBodies' | 'purgeKeys' | 'compactTallies' }>): Promise<T>;
  guard<T>(fn: () => Promise<T>): Promise<T>;
  isOpen(): boolean;
  /** SQLite: gives a step of freed pages back to the file system; true while more are left (PostgreSQL's autovacuum does it itself). */
  giveBack?(): Promise<boolean>;
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
  /** The rest after each upkeep write (default: a timer) and the clock that times the write (default: performance.now). */
  pace?: { now(): number; rest(ms: number): Promise<void> };
}

export type Maintenance = ReturnType<typeof startMaintenance>;

/** Starts the timers (they do not keep the process alive). */
export function startMaintenance(given: PurgePort, opts: MaintenanceOptions) {
  const port = paced(given, opts.pace ?? { now: () => performance.now(), rest: (ms) => sleep(ms, undefined, { ref: false }) });
  const clock = opts.clock ?? (() => new Date());
  const keyWindowMs = opts.idempotencyWindowSeconds * 1000;
  const keysSince = () => new Date(clock().getTime() - keyWindowMs).toISOString();
  let purging: Promise<PurgeCounts> | undefined;

  const purgeExpiredKeys = () => port.guard(() => keysPass(port, opts.log, keysSince()));
  /** One retention pass (CONTRACT.md §3): the request log's part, then ended runs, turns, events, settled outbox rows; one under way is joined. */
  const purgeExpired = (): Promise<PurgeCounts> => {
    purging ??= port.guard(async () => {
      const now = clock();
      const before = opts.retainDays > 0 ? new Date(now.getTime() - opts.retainDays * DAY_MS).toISOString() : undefined;
      const requests = await requestLogPass(port, opts.log, now, before);
      const counts = before ? await retentionPass(port, opts.log, before) : { runs: 0, history: 0, events: 0, outbox: 0 };
      await port.write({ kind: 'compactTallies' });
      if (requests + counts.runs + counts.history + counts.events + counts.outbox > 0 && port.giveBack) while (await port.giveBack()) continue;
      return counts;
    }).finally(() => (purging = undefined));
    return purging;
  };

  const purgeEveryMs = opts.purgeEveryMs ?? PURGE_EVERY_MS;
  // A tenth of the window, between a second and ten minutes: a key outlives its window by at
  // most that (it no longer answers once past it; the purge only frees the room).
  const keysEveryMs = opts.keysPurgeEveryMs ?? Math.min(Math.max(keyWindowMs / 10, 1000), 600_000);
  const failed = (what: string) => (err: unknown) => {
    if (!(err instanceof StoreError && err.code === 'closed')) opts.log.warn({ err }, what);
  };
  const timers = [
    repeat(port.isOpen, purgeExpired, failed('store retention pass failed; retrying later'), Math.min(purgeEveryMs, FIRST_PURGE_MAX_MS), purgeEveryMs),
    repeat(port.isOpen, purgeExpiredKeys, failed('idempotency key purge failed; retrying later'), keysEveryMs, keysEveryMs),
  ];
  return {
    clock,
    keysSince,
    purgeExpired,
    purgeExpiredKeys,
    stop: () => timers.forEach((t) => void t.stop()),
  };
}

/** Runs `task` after `firstMs`, then `everyMs` after each run ends, while `isOpen()`; `stop` waits for a run under way. */
export function repeat(
  isOpen: () => boolean, task: () => Promise<unknown>, onError: (err: unknown) => void, firstMs: number, everyMs: number,
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      if (!isOpen()) return;
      running = task().then(() => {}, onError).finally(() => {
        running = undefined;
        if (isOpen()) schedule(everyMs);
      });
    }, ms).unref();
  };
  schedule(firstMs);
  return {
    stop: async () => {
      clearTimeout(timer);
      await running;
    },
  };
}

/** Each upkeep write followed by a rest of (1 / share − 1) times as long as it took. */
function paced(port: PurgePort, pace: NonNullable<MaintenanceOptions['pace']>): PurgePort {
  const rest = async <T>(write: () => Promise<T>): Promise<T> => {
    const t0 = pace.now();
    const value = await write();
    await pace.rest((pace.now() - t0) * (1 / UPKEEP_SHARE - 1));
    return value;
  };
  const giveBack = port.giveBack;
  return { ...port, write: (op) => rest(() => port.write(op)), ...(giveBack ? { giveBack: () => rest(giveBack) } : {}) };
}

async function purgeTable(port: PurgePort, table: PurgeTable | 'requests', before: string): Promise<number> {
  let deleted = 0;
  let after: number | undefined = 0;
  while (after !== undefined) {
    const step: PurgeStep = await port.write({ kind: 'purge', table, before, after, max: PURGE_BATCH });
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

async function requestLogPass(port: PurgePort, log: Logger, now: Date, rowsBefore: string | undefined): Promise<number> {
  const requests = rowsBefore === undefined ? 0 : await purgeTable(port, 'requests', rowsBefore);
  const bodies = await untilShort((max) => port.write<number>({ kind: 'purgeBodies', now: now.toISOString(), max }));
  if (requests + bodies > 0) log.info({ requests, bodies }, 'store retention: old request-log rows and bodies purged');
  return requests + bodies;
}

async function keysPass(port: PurgePort, log: Logger, before: string): Promise<number> {
  const total = await untilShort((max) => port.write<number>({ kind: 'purgeKeys', before, max }));
  if (total > 0) log.info({ deleted: total, before }, 'idempotency keys past the window purged');
  return total;
}
