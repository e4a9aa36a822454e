import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { startMaintenance, type Maintenance, type PurgePort, type PurgeStep } from './maintenance.js';
import { BATCH_MAX, type StoreOptions } from './options.js';
import type {
  ClaimRules, DeliveryOutcomeRecord, FlowState, DeliveryRecord, EventRecord, HistoryMessage, ListRequestsOptions, ListRunsOptions, NewDelivery, NewEvent, NewForward,
  NewKey, NewRequestLog, NewRun, RequestRecord, RunEffects, RunEnd, RunRecord, RunStatus, SettleEffects, StoredKey,
} from './records.js';
import { toFlowState, toHeldCounts } from './flow-rows.js';
import { createRateWindow } from './rate-window.js';
import { requestValues } from './request-rows.js';
import * as sql from './sql/index.js';
import { lockDataDir, type DataDirLock } from './sqlite-lock.js';
import type { WriteOp, WriterPragmas } from './sqlite-ops.js';
import { startQueue, type SqliteStoreStats, type WriteQueue } from './sqlite-queue.js';
import { DB_FILE, SqliteReader, readWith, toLimit } from './sqlite-reader.js';
import { eventValues, forwardValues, keyValues, migrate, runValues, toDelivery, toRun, type OutboxRow, type RunRow } from './sqlite-schema.js';
import { startWriter } from './sqlite-writer.js';
import { StoreError, type LeaderHandlers, type Leadership, type Store, type TakenOver } from './store.js';

/** Options of {@link SqliteStore.open}: the common ones (options.ts) and where the data is. */
export interface SqliteStoreOptions extends StoreOptions {
  /** Directory of `hookrelay.db`; created when missing. */
  dataDir: string;
  /** `store.durability`. `fsync`: a commit is on disk before it resolves; `os`: the OS has it (CONTRACT.md §3). */
  durability: 'fsync' | 'os';
  /**
   * `false` skips the data-directory lock ({@link lockDataDir}). Only for specs that need two
   * writers on one file (the claim's triggers must hold when another process writes it).
   */
  lock?: false;
}

const NONE_HELD: readonly number[] = Object.freeze([]);

/**
 * The embedded store: `{dataDir}/hookrelay.db`, SQLite in WAL mode.
 *
 * Writes go through the queue (sqlite-queue.ts) to a writer thread (sqlite-writer.ts) that
 * commits each batch in one transaction (group commit), so the event loop never blocks on the
 * disk. Reads run here, on a separate read-only connection: WAL lets them proceed beside the
 * writer, and each read sees every commit acknowledged before it started. Retention and the
 * purges are maintenance.ts's, over this store's purge ops.
 *
 * The data directory is locked for the store's life ({@link lockDataDir}): one server per
 * store. If the writer thread dies, writes reject with `unavailable` (reads keep working until
 * {@link close}); if the database file is removed under it, every call does.
 */
export class SqliteStore implements Store {
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing: Promise<void> | undefined;
  /** Whether claimRuns was called: see {@link takeOver}. */
  private claimed = false;
  /** ratePerMinute's windows: in the process, the only one on this store (rate-window.ts). */
  private readonly rates = createRateWindow();
  /** Runs takeOver has handed out: each once. */
  private readonly takenOver = new Set<string>();
  private readonly maintenance: Maintenance;
  /** Maintenance now, beside its own timers (maintenance.ts): a retention pass, its request-log part, the key purge. */
  readonly purgeExpired: Maintenance['purgeExpired'];
  readonly purgeRequestLog: Maintenance['purgeRequestLog'];
  readonly purgeExpiredKeys: Maintenance['purgeExpiredKeys'];

  private constructor(
    private readonly reader: SqliteReader,
    /** The writer thread; the queue talks to it (specs stop it to see how the store copes). */
    private readonly worker: Worker,
    private readonly queue: WriteQueue,
    private readonly lock: DataDirLock | undefined,
    opts: SqliteStoreOptions,
  ) {
    this.maintenance = startMaintenance(this.purgePort(), opts);
    ({ purgeExpired: this.purgeExpired, purgeRequestLog: this.purgeRequestLog, purgeExpiredKeys: this.purgeExpiredKeys } = this.maintenance);
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
        db.prepare(sql.outbox.releaseLeases.sqlite).run(); // the process before's outbox leases (the directory is ours now)
        db.pragma('query_only = ON'); // every write goes through the writer thread
      });
      const queue = startQueue(worker, {
        log: opts.log, batchMax: opts.batchMax ?? BATCH_MAX, onCommit: opts.onCommit, writerStartMs: performance.now() - t0,
      });
      return new SqliteStore(new SqliteReader(db!), worker, queue, lock, opts);
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
    const op: WriteOp = { kind: 'accept', events: [], runs: runs.map(runValues) };
    for (const e of events) (e.held ? (op.held ??= []) : op.events).push(eventValues(e));
    if (forwards?.length) op.forwards = forwards.map((f) => [f.key, forwardValues(f)]);
    if (request) op.request = requestValues(request);
    if (!keys?.length) return this.write<undefined>(op).then(() => NONE_HELD);
    op.keys = keys.map((k) => ({ values: keyValues(k), events: k.eventIds, runs: k.runIds }));
    op.expiredBefore = this.maintenance.keysSince();
    return this.write<number[] | undefined>(op).then((held) => held ?? NONE_HELD);
  }

  findKeys(keys: string[]): Promise<(StoredKey | undefined)[]> {
    return this.read(() => this.reader.findKeys(keys, this.maintenance.keysSince()));
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

  async claimRuns(limit: number, startedAt: string, rules?: ClaimRules): Promise<RunRecord[]> {
    this.claimed = true;
    if (toLimit(limit) === 0) return this.read(() => []);
    const op: WriteOp = { kind: 'claim', limit: toLimit(limit), startedAt };
    if (rules) op.rules = { held: JSON.stringify(rules.held ?? []), limits: JSON.stringify(rules.limits ?? {}) };
    const rows = await this.write<RunRow[]>(op);
    return rows.map(toRun);
  }

  pauseMapping(id: string, paused: boolean): Promise<void> {
    return this.write({ kind: 'pause', id, paused, at: this.maintenance.clock().toISOString() });
  }

  flowState(): Promise<FlowState> {
    return this.read(() => toFlowState(this.reader.db.prepare<[], { name: string; what: string }>(sql.flow.flowState.sqlite).all()));
  }

  releaseWakes(source: string): Promise<number> {
    return this.write<number>({ kind: 'releaseWakes', source });
  }

  countHeld(): Promise<Record<string, number>> {
    return this.read(() => toHeldCounts(this.reader.db.prepare<[], { source: string; n: number }>(sql.flow.countHeld.sqlite).all()));
  }

  takeRate(key: string, limit: number): Promise<number> {
    return this.read(() => this.rates.take(key, limit, Date.now()));
  }

  returnRate(key: string): Promise<void> {
    return this.read(() => this.rates.give(key));
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
    return this.write({ kind: 'finish', runId, end, effects, at: this.maintenance.clock().toISOString() });
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
    const at = this.maintenance.clock().toISOString();
    return this.write({ kind: 'append', sessionKey, messages, state, events: events.map(eventValues), at, delivery });
  }

  getState(key: string): Promise<string | undefined> {
    return this.read(() => this.reader.getState(key));
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

  /** The writer connection's journal mode, synchronous level and schema version, read back. */
  pragmas(): Promise<WriterPragmas> {
    return this.write({ kind: 'inspect' });
  }

  commitProblem(): string | undefined {
    return this.queue.problem();
  }

  /** Group-commit counters since open. */
  stats(): SqliteStoreStats {
    return this.queue.stats();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.maintenance.stop();
    this.state = 'closing'; // new calls reject from here on; queued writes still commit
    await this.queue.idle();
    this.reader.close();
    await this.queue.stopWriter();
    this.lock?.release(); // last: the database is closed, the next owner may take it
    this.state = 'closed';
  }

  /** Maintenance's writes: each one op of the writer's (sqlite-purge.ts), taking turns with the others. */
  private purgePort(): PurgePort {
    return {
      purge: (table, before, after, max) => this.write<PurgeStep>({ kind: 'purge', table, before, after, max }),
      purgeBodies: (now, max) => this.write<number>({ kind: 'purgeBodies', now, max }),
      purgeKeys: (before, max) => this.write<number>({ kind: 'purgeKeys', before, max }),
      guard: (fn) => fn(), // each write checks that the store is open
      isOpen: () => this.state === 'open',
    };
  }

  private read<T>(fn: () => T): Promise<T> {
    if (this.state !== 'open') return Promise.reject(new StoreError('closed', 'the store is closed'));
    const gone = this.queue.gone();
    if (gone) return Promise.reject(gone);
    return readWith(fn);
  }

  private write<T = void>(op: WriteOp): Promise<T> {
    if (this.state !== 'open') return Promise.reject(new StoreError('closed', 'the store is closed'));
    return this.queue.write<T>(op);
  }
}
