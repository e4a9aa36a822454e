import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { Logger } from '../log.js';
import { requestValues } from './request-rows.js';
import { eventValues, forwardValues, keyValues, migrate, runValues, toDelivery, toRun, type OutboxRow, type RunRow } from './sqlite-schema.js';
import { lockDataDir, type DataDirLock } from './sqlite-lock.js';
import { DB_FILE, SqliteReader, readWith, toLimit, toStoreError } from './sqlite-reader.js';
import type { PurgeStep, PurgeTable, WriteOp, WriterPragmas } from './sqlite-ops.js';
import { STORE_GONE, startWriter, type FromWriter } from './sqlite-writer.js';
import type {
  EventRecord, HistoryMessage, ListRunsOptions, NewEvent, NewKey, NewRun, RunEffects, RunEnd, StoredKey, RunRecord, RunStatus, DeliveryRecord, DeliveryOutcomeRecord, NewDelivery, NewForward, SettleEffects, ListRequestsOptions, NewRequestLog, RequestRecord,
} from './records.js';
import { StoreError, type Store, type LeaderHandlers, type Leadership, type TakenOver } from './store.js';

/** Options of {@link SqliteStore.open}. */
export interface SqliteStoreOptions {
  /** Directory of `hookrelay.db`; created when missing. */
  dataDir: string;
  /** `fsync`: a commit is on disk before it resolves; `os`: the OS has it (CONTRACT.md §3). */
  durability: 'fsync' | 'os';
  log: Logger;
  /** Most write ops per transaction (default 512): bounds one commit's latency and message size. */
  batchMax?: number;
  /**
   * `store.retainDays`: ended runs, conversation turns and events older than this many days
   * are purged in the background ({@link SqliteStore.purgeExpired}); 0 or absent keeps everything.
   */
  retainDays?: number;
  /** What "now" is for retention and for the time of stored conversation turns (specs inject it). */
  clock?: () => Date;
  /** `hooks.idempotencyWindowSeconds` (default 86400): how long a key is kept and answered. */
  idempotencyWindowSeconds?: number;
  /** How often keys past the window are purged (default a tenth of it, 1 s to 10 min). */
  keysPurgeEveryMs?: number;
  /** How often retention runs (default hourly); the first pass runs this long after open, at most a minute. */
  purgeEveryMs?: number;
  /**
   * Called after each group commit that carried accepts, with how many (the
   * `hookrelay_commit_batch_size` histogram, src/metrics.ts): a plain callback, so that the
   * store knows nothing of how it is measured.
   */
  onCommit?: (accepts: number) => void;
  /**
   * `false` skips the data-directory lock ({@link lockDataDir}). Only for specs that need two
   * writers on one file (the claim's triggers must hold when another process writes it).
   */
  lock?: false;
}

/** Counters for benchmarks and specs (not part of {@link Store}). */
export interface SqliteStoreStats {
  /** Transactions committed by the writer: one fsync each in `fsync` mode. */
  commits: number;
  /** Write ops that went through those commits (including ops that failed alone). */
  ops: number;
  largestBatch: number;
  /** Time the writer spent in transactions, BEGIN to COMMIT (fsync included). */
  commitMs: number;
  /**
   * open() time: spawning the writer thread until its connection is ready (the read
   * connection opens and migrates meanwhile).
   */
  writerStartMs: number;
}

interface Pending {
  op: WriteOp;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

const SLOW_COMMIT_MS = 1000;
const DEFAULT_KEY_WINDOW_SECONDS = 86_400;
const NONE_HELD: readonly number[] = Object.freeze([]);
const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows one purge op looks at: each op is one short write among the others, never a long hold. */
export const PURGE_BATCH = 500;
const PURGE_TABLES: readonly PurgeTable[] = ['runs', 'history', 'events', 'outbox'];

/** Rows removed by one retention pass. */
export type PurgeCounts = Record<PurgeTable, number>;

/** What one pass did to the request log: rows past store.retainDays, bodies past their time (hooks.keepBodies). */
export interface RequestPurgeCounts {
  requests: number;
  bodies: number;
}

/**
 * The embedded store: `{dataDir}/hookrelay.db`, SQLite in WAL mode.
 *
 * Writes are queued and sent in batches to a writer thread (`sqlite-writer.ts`) that commits
 * each batch in one transaction — one fsync for up to `batchMax` ops (group commit) — so
 * the event loop never blocks on the disk. While a batch is in flight, new ops gather for
 * the next. Reads run here, on a separate read-only connection: WAL lets them proceed beside
 * the writer, and each read sees every commit acknowledged before it started.
 *
 * The data directory is locked for the store's life ({@link lockDataDir}): one server per
 * store. If the writer thread dies, queued and later writes reject with `unavailable` (reads
 * keep working until {@link close}). If the database file or its WAL is removed or replaced
 * under the running store, the writer notices after the next commit: that batch and every
 * later call, reads included, reject with `unavailable` until a restart, and one error line
 * says so. An idle writer does not keep the process alive.
 */
export class SqliteStore implements Store {
  private readonly queue: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing: Promise<void> | undefined;
  private writerError: StoreError | undefined;
  /** Set once the database file is found removed or replaced: every call rejects with it. */
  private goneError: StoreError | undefined;
  private lastWorkerError: Error | undefined;
  private stopping = false;
  /** Whether claimRuns was called: see {@link takeOver}. */
  private claimed = false;
  /** Runs takeOver has handed out: each once. */
  private readonly takenOver = new Set<string>();
  private readonly counters: SqliteStoreStats;
  private readonly clock: () => Date;
  private purgeTimer: NodeJS.Timeout | undefined;
  private purging: Promise<PurgeCounts> | undefined;
  private keyPurgeTimer: NodeJS.Timeout | undefined;
  private readonly keyWindowMs: number;

  private constructor(
    private readonly reader: SqliteReader,
    private readonly worker: Worker,
    private readonly lock: DataDirLock | undefined,
    private readonly log: Logger,
    private readonly batchMax: number,
    writerStartMs: number,
    private readonly retainDays: number,
    clock: (() => Date) | undefined,
    purgeEveryMs: number,
    keyWindowSeconds: number,
    keysPurgeEveryMs: number | undefined,
    private readonly onCommit: ((accepts: number) => void) | undefined,
  ) {
    this.counters = { commits: 0, ops: 0, largestBatch: 0, commitMs: 0, writerStartMs };
    this.clock = clock ?? (() => new Date());
    worker.on('message', (msg: FromWriter) => this.onMessage(msg));
    worker.on('error', (err) => (this.lastWorkerError = err));
    worker.on('exit', (code) => this.onExit(code));
    worker.unref(); // referenced only while a batch is in flight
    // Always: kept request bodies expire by their own time (hooks.keepBodies), whatever retainDays says.
    this.schedulePurge(Math.min(purgeEveryMs, 60_000), purgeEveryMs);
    this.keyWindowMs = keyWindowSeconds * 1000;
    // A tenth of the window, between a second and ten minutes: a key outlives its window by
    // at most that (it no longer answers once past it; the purge only frees the room).
    this.scheduleKeyPurge(keysPurgeEveryMs ?? Math.min(Math.max(this.keyWindowMs / 10, 1000), 600_000));
  }

  /**
   * Locks the data directory, then opens (creating and migrating when needed)
   * `{dataDir}/hookrelay.db` and starts the writer. The read connection migrates while the
   * writer thread boots. Rejects with {@link StoreError} `locked` when another process (or
   * another store in this one) has the directory, before touching the database.
   */
  static async open(opts: SqliteStoreOptions): Promise<SqliteStore> {
    mkdirSync(opts.dataDir, { recursive: true });
    const lock = opts.lock === false ? undefined : lockDataDir(opts.dataDir);
    const file = join(opts.dataDir, DB_FILE);
    const t0 = performance.now();
    let db: Database.Database | undefined;
    try {
      const worker = await startWriter(file, opts.durability, () => {
        db = new Database(file);
        db.pragma('busy_timeout = 5000');
        db.pragma('journal_mode = WAL'); // persistent: stored in the file (https://www.sqlite.org/wal.html#persistence_of_wal_mode)
        db.pragma(`synchronous = ${opts.durability === 'fsync' ? 'FULL' : 'NORMAL'}`); // for the migration's commit
        const { from, to } = migrate(db);
        if (from !== to) opts.log.info({ file, from, to }, 'store schema migrated');
        // The data directory is ours (locked): outbox leases were taken by a process that has
        // stopped, so its pending deliveries are claimable at once rather than after the lease.
        db.prepare("UPDATE outbox SET lease_until = NULL WHERE status = 'pending' AND lease_until IS NOT NULL").run();
        db.pragma('query_only = ON'); // every write goes through the writer thread
      });
      return new SqliteStore(
        new SqliteReader(db!), worker, lock, opts.log, opts.batchMax ?? 512, performance.now() - t0,
        opts.retainDays ?? 0, opts.clock, opts.purgeEveryMs ?? 60 * 60 * 1000,
        opts.idempotencyWindowSeconds ?? DEFAULT_KEY_WINDOW_SECONDS, opts.keysPurgeEveryMs, opts.onCommit,
      );
    } catch (err) {
      db?.close();
      lock?.release();
      throw err;
    }
  }

  accept(events: NewEvent[], runs: NewRun[], keys?: NewKey[], forwards?: NewForward[], request?: NewRequestLog): Promise<readonly number[]> {
    if (events.length === 0 && runs.length === 0 && !keys?.length) {
      return request ? this.logRequests([request]).then(() => NONE_HELD) : this.read(() => NONE_HELD);
    }
    const op: WriteOp = { kind: 'accept', events: events.map(eventValues), runs: runs.map(runValues) };
    if (forwards?.length) op.forwards = forwards.map((f) => [f.key, forwardValues(f)]);
    if (request) op.request = requestValues(request);
    if (!keys?.length) return this.write<undefined>(op).then(() => NONE_HELD);
    op.keys = keys.map((k) => ({ values: keyValues(k), events: k.eventIds, runs: k.runIds }));
    op.expiredBefore = this.keysSince();
    return this.write<number[] | undefined>(op).then((held) => held ?? NONE_HELD);
  }

  findKeys(keys: string[]): Promise<(StoredKey | undefined)[]> {
    return this.read(() => this.reader.findKeys(keys, this.keysSince()));
  }

  logRequests(rows: NewRequestLog[]): Promise<void> {
    if (rows.length === 0) return this.read(() => undefined);
    return this.write({ kind: 'requests', rows: rows.map(requestValues) });
  }

  listRequests(opts: ListRequestsOptions): Promise<RequestRecord[]> {
    return this.read(() => this.reader.listRequests(opts));
  }

  getRequest(seq: number): Promise<RequestRecord | undefined> {
    return this.read(() => this.reader.getRequest(seq));
  }

  /**
   * The request log's part of a retention pass: rows older than `store.retainDays` (none when
   * it is 0), and kept bodies past their `bodyUntil` (hooks.keepBodies), each a series of
   * small write ops as for the other tables.
   */
  async purgeRequestLog(): Promise<RequestPurgeCounts> {
    const now = this.clock();
    const counts: RequestPurgeCounts = { requests: 0, bodies: 0 };
    if (this.retainDays > 0) {
      const before = new Date(now.getTime() - this.retainDays * DAY_MS).toISOString();
      let after: number | undefined = 0;
      while (after !== undefined) {
        const step: PurgeStep = await this.write({ kind: 'purgeRequests', before, after, max: PURGE_BATCH });
        counts.requests += step.deleted;
        after = step.next;
      }
    }
    for (;;) {
      const n: number = await this.write({ kind: 'purgeBodies', now: now.toISOString(), max: PURGE_BATCH });
      counts.bodies += n;
      if (n < PURGE_BATCH) break;
    }
    if (counts.requests + counts.bodies > 0) this.log.info({ ...counts }, 'store retention: old request-log rows and bodies purged');
    return counts;
  }

  /** Keys accepted before this ISO time are past the idempotency window. */
  private keysSince(): string {
    return new Date(this.clock().getTime() - this.keyWindowMs).toISOString();
  }

  /**
   * Deletes idempotency keys older than the window, {@link PURGE_BATCH} at a time (each a
   * short write among the others, oldest first, by the `at` index). Returns how many went.
   */
  async purgeExpiredKeys(): Promise<number> {
    const before = this.keysSince();
    let total = 0;
    for (;;) {
      const deleted: number = await this.write({ kind: 'purgeKeys', before, max: PURGE_BATCH });
      total += deleted;
      if (deleted < PURGE_BATCH) break;
    }
    if (total > 0) this.log.info({ deleted: total, before }, 'idempotency keys past the window purged');
    return total;
  }

  private scheduleKeyPurge(everyMs: number): void {
    this.keyPurgeTimer = setTimeout(() => {
      if (this.state !== 'open') return;
      this.purgeExpiredKeys().then(
        () => this.state === 'open' && this.scheduleKeyPurge(everyMs),
        (err) => {
          if (!(err instanceof StoreError && err.code === 'closed')) this.log.warn({ err }, 'idempotency key purge failed; retrying later');
          if (this.state === 'open') this.scheduleKeyPurge(everyMs);
        },
      );
    }, everyMs);
    this.keyPurgeTimer.unref();
  }

  listEvents(after: number, limit: number, maxBytes?: number): Promise<EventRecord[]> {
    return this.read(() => this.reader.listEvents(after, limit, maxBytes));
  }

  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.read(() => this.reader.getRun(runId));
  }

  listRuns(opts: ListRunsOptions): Promise<RunRecord[]> {
    return this.read(() => this.reader.listRuns(opts));
  }

  countRuns(): Promise<Record<RunStatus, number>> {
    return this.read(() => this.reader.countRuns());
  }

  async claimRuns(limit: number, startedAt: string): Promise<RunRecord[]> {
    this.claimed = true;
    if (toLimit(limit) === 0) return this.read(() => []);
    const rows = await this.write<RunRow[]>({ kind: 'claim', limit: toLimit(limit), startedAt });
    return rows.map(toRun);
  }

  /**
   * The only instance (the data-directory lock): runs running before this store claimed any
   * are the process before's, each handed out once. Once it has claimed, every running run is its own: none.
   */
  async takeOver(limit: number): Promise<TakenOver> {
    if (this.claimed) return this.read(() => ({ runs: [], deliveries: 0 }));
    const runs = (await this.listRuns({ status: 'running', limit: limit + this.takenOver.size })).filter((r) => !this.takenOver.has(r.runId)).slice(0, limit);
    for (const r of runs) this.takenOver.add(r.runId);
    return { runs, deliveries: 0 };
  }

  /** The only instance is the leader, at once; `now` triggers stay in the process. */
  lead(handlers: LeaderHandlers): Promise<Leadership> {
    return this.read(() => {
      handlers.onLeader(true);
      return { stop: async () => {} };
    });
  }

  finishRun(runId: string, end: RunEnd, effects: RunEffects): Promise<void> {
    return this.write({ kind: 'finish', runId, end, effects, at: this.clock().toISOString() });
  }

  requeueRuns(runIds: string[]): Promise<void> {
    return this.write({ kind: 'requeue', runIds });
  }

  history(sessionKey: string, limit: number): Promise<HistoryMessage[]> {
    return this.read(() => this.reader.history(sessionKey, limit));
  }

  appendHistory(
    sessionKey: string, messages: HistoryMessage[], state?: Record<string, string>, events: NewEvent[] = [], delivery?: NewDelivery,
  ): Promise<void> {
    return this.write({ kind: 'append', sessionKey, messages, state, events: events.map(eventValues), at: this.clock().toISOString(), delivery });
  }

  async claimDeliveries(now: string, limit: number, leaseUntil: string): Promise<{ deliveries: DeliveryRecord[]; nextAt?: string }> {
    const { rows, nextAt } = await this.write<{ rows: OutboxRow[]; nextAt?: string }>({ kind: 'claimOutbox', now, limit: toLimit(limit), leaseUntil });
    return nextAt === undefined ? { deliveries: rows.map(toDelivery) } : { deliveries: rows.map(toDelivery), nextAt };
  }

  ackPart(id: number, part: number): Promise<void> {
    return this.write({ kind: 'ackPart', id, part });
  }

  retryDelivery(id: number, at: string, error: string): Promise<void> {
    return this.write({ kind: 'retryDelivery', id, at, error });
  }

  settleDelivery(id: number, outcome: DeliveryOutcomeRecord, effects: SettleEffects): Promise<void> {
    return this.write({ kind: 'settleDelivery', id, outcome, effects });
  }

  /**
   * One retention pass (`store.retainDays`, CONTRACT.md §3): deletes ended runs, conversation
   * turns and events older than that, as a series of small write ops ({@link PURGE_BATCH} rows
   * looked at each) that take turns with the other writes, so that requests never wait behind
   * a long delete. Queued and running runs stay. A pass already under way is joined.
   */
  purgeExpired(): Promise<PurgeCounts> {
    this.purging ??= this.purgePass().finally(() => (this.purging = undefined));
    return this.purging;
  }

  private async purgePass(): Promise<PurgeCounts> {
    const counts: PurgeCounts = { runs: 0, history: 0, events: 0, outbox: 0 };
    await this.purgeRequestLog();
    if (this.retainDays <= 0) return counts;
    const before = new Date(this.clock().getTime() - this.retainDays * DAY_MS).toISOString();
    for (const table of PURGE_TABLES) {
      let after: number | undefined = 0;
      while (after !== undefined) {
        const step: PurgeStep = await this.write({ kind: 'purge', table, before, after, max: PURGE_BATCH });
        counts[table] += step.deleted;
        after = step.next;
      }
    }
    if (counts.runs + counts.history + counts.events + counts.outbox > 0) this.log.info({ ...counts, before }, 'store retention: old rows purged');
    return counts;
  }

  private schedulePurge(firstMs: number, everyMs: number): void {
    this.purgeTimer = setTimeout(() => {
      if (this.state !== 'open') return;
      this.purgeExpired().then(
        () => this.schedulePurge(everyMs, everyMs),
        (err) => {
          // A closed store stops here; anything else is retried at the next interval.
          if (!(err instanceof StoreError && err.code === 'closed')) this.log.warn({ err }, 'store retention pass failed; retrying later');
          if (this.state === 'open') this.schedulePurge(everyMs, everyMs);
        },
      );
    }, firstMs);
    this.purgeTimer.unref();
  }

  getState(key: string): Promise<string | undefined> {
    return this.read(() => this.reader.getState(key));
  }

  /** The writer connection's journal mode, synchronous level and schema version, read back. */
  pragmas(): Promise<WriterPragmas> {
    return this.write({ kind: 'inspect' });
  }

  /** Group-commit counters since open. */
  stats(): SqliteStoreStats {
    return { ...this.counters };
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    clearTimeout(this.purgeTimer);
    clearTimeout(this.keyPurgeTimer);
    this.state = 'closing'; // new calls reject from here on; queued writes still commit
    await new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.notifyIdle();
    });
    this.reader.close();
    if (!this.writerError) await this.stopWriter();
    this.lock?.release(); // last: the database is closed, the next owner may take it
    this.state = 'closed';
  }

  private stopWriter(): Promise<void> {
    return new Promise((resolve) => {
      this.stopping = true;
      const timer = setTimeout(() => {
        this.log.warn('store writer did not stop within 10 s; terminating it');
        void this.worker.terminate();
      }, 10_000).unref();
      this.worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.worker.ref();
      this.worker.postMessage({ type: 'close' });
    });
  }

  private read<T>(fn: () => T): Promise<T> {
    if (this.state !== 'open') return Promise.reject(new StoreError('closed', 'the store is closed'));
    if (this.goneError) return Promise.reject(this.goneError);
    return readWith(fn);
  }

  private write<T = void>(op: WriteOp): Promise<T> {
    if (this.state !== 'open') return Promise.reject(new StoreError('closed', 'the store is closed'));
    if (this.goneError) return Promise.reject(this.goneError);
    if (this.writerError) return Promise.reject(this.writerError);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.inFlight && !this.scheduled) {
        // Wait for the end of this turn of the event loop, so that everything accepted in
        // it (e.g. several requests parsed in one poll phase) shares the commit.
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    if (this.inFlight || this.queue.length === 0 || this.writerError || this.goneError) return;
    const batch = this.queue.splice(0, this.batchMax);
    try {
      this.worker.postMessage({ type: 'batch', ops: batch.map((p) => p.op) });
    } catch (err) {
      // DataCloneError: some op holds a value that cannot cross threads (a function, …).
      // Reject just those and send the rest; this path costs a clone per op, so only here.
      const sendable = batch.filter((p) => {
        try {
          structuredClone(p.op);
          return true;
        } catch {
          p.reject(new StoreError('failed', `a value cannot be stored: ${(err as Error).message}`, { cause: err }));
          return false;
        }
      });
      this.queue.unshift(...sendable);
      if (sendable.length < batch.length) this.flush();
      else {
        const e = new StoreError('unavailable', `cannot reach the store writer: ${(err as Error).message}`, { cause: err });
        for (const p of this.queue.splice(0, batch.length)) p.reject(e);
      }
      return;
    }
    this.inFlight = batch;
    this.worker.ref();
  }

  private onMessage(msg: FromWriter): void {
    if (msg.type !== 'batch' || !this.inFlight) return;
    const batch = this.inFlight;
    this.inFlight = undefined;
    if (!msg.error) {
      this.counters.commits++;
      this.counters.ops += batch.length;
      this.counters.largestBatch = Math.max(this.counters.largestBatch, batch.length);
      const failed = msg.failed && new Map(msg.failed);
      let accepts = 0;
      for (let i = 0; i < batch.length; i++) {
        const error = failed?.get(i);
        if (batch[i]!.op.kind === 'accept') accepts++;
        if (error) batch[i]!.reject(toStoreError(error));
        else batch[i]!.resolve(msg.values?.[i]);
      }
      // Commits of other ops only (claims, acks, purges) would crowd the histogram with zeros.
      if (accepts > 0) this.onCommit?.(accepts);
    } else if (msg.error.code === STORE_GONE) {
      this.storeGone(msg.error.message, batch);
    } else {
      const err = toStoreError(msg.error, 'unavailable');
      this.log.error({ err, ops: batch.length }, 'store commit failed; the whole batch is rolled back');
      for (const p of batch) p.reject(err);
    }
    this.counters.commitMs += msg.ms;
    if (msg.ms > SLOW_COMMIT_MS) this.log.warn({ ms: Math.round(msg.ms), ops: batch.length }, 'slow store commit');
    // Ops that arrived while this batch was in flight go at once: they already waited.
    this.flush();
    if (!this.inFlight) this.worker.unref();
    this.notifyIdle();
  }

  /**
   * The database file (or its WAL) is not the one opened: what was committed since went into
   * a removed file. Fails the batch, the queue and every later call; says so once.
   */
  private storeGone(what: string, batch: Pending[]): void {
    this.goneError = new StoreError(
      'unavailable',
      `${what} while the store was open; nothing more is stored until hookrelay is restarted`,
    );
    this.log.error(
      { what },
      'store database file removed or replaced under the running server: requests that need the store get 503 from now on; stop hookrelay, put the file back from a backup if you have one, and start it again (a start without it creates an empty store)',
    );
    for (const p of [...batch, ...this.queue.splice(0)]) p.reject(this.goneError);
  }

  private onExit(code: number): void {
    if (this.stopping) return;
    const why = this.lastWorkerError ? `: ${this.lastWorkerError.message}` : '';
    this.writerError = new StoreError('unavailable', `the store writer thread stopped (exit code ${code})${why}`, {
      cause: this.lastWorkerError,
    });
    this.log.error({ err: this.lastWorkerError, code }, 'store writer thread stopped; writes are unavailable');
    const lost = [...(this.inFlight ?? []), ...this.queue.splice(0)];
    this.inFlight = undefined;
    for (const p of lost) p.reject(this.writerError);
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.inFlight || (this.queue.length > 0 && !this.writerError && !this.goneError)) return;
    const waiters = this.idleWaiters.splice(0);
    for (const w of waiters) w();
  }
}
