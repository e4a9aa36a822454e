import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { refuseOtherSchema, sqliteProblem, sqliteStoreError } from './db-errors.js';
import { sqliteDb } from './dialect.js';
import type { ClaimRules, RunRecord } from './records.js';
import { readerOf } from './reads.js';
import { StoreShell, type StoreOptions } from './shell.js';
import * as sql from './sql/index.js';
import { lockDataDir } from './sqlite-lock.js';
import { startReader, type ReaderDb } from './sqlite-reader.js';
import { migrate, SCHEMA_VERSION } from './sqlite-schema.js';
import { STORE_GONE, startWriter, type Writer, type WriterPragmas } from './sqlite-writer.js';
import { isStoreDown, StoreError, type LeaderHandlers, type Leadership, type StoreReader, type TakenOver } from './store.js';
import type { BatchOutcome, WriteOp } from './writes.js';

export const DB_FILE = 'hookrelay.db';
const SLOW_COMMIT_MS = 1000;
/** Free pages given back per step after a retention pass: 4 MiB of 4 KiB pages. */
const GIVE_BACK_PAGES = 1024;
/** The rate window (ratePerMinute, CONTRACT.md §14). */
const RATE_WINDOW_MS = 60_000;

export interface SqliteStoreOptions extends StoreOptions {
  /** Directory of `hookrelay.db`; created when missing. */
  dataDir: string;
  /** `store.durability`. `fsync`: a commit is on disk before it resolves; `os`: the OS has it (CONTRACT.md §3). */
  durability: 'fsync' | 'os';
  /** `false` skips the data-directory lock: only for specs that need two writers on one file. */
  lock?: false;
}

/** The embedded store, SQLite in WAL mode: writes group-committed by a writer thread, reads in a reader thread beside it (the accept path's key lookups on a connection of this thread). */
export class SqliteStore extends StoreShell {
  /** Whether claimRuns was called: see {@link takeOver}. */
  private claimed = false;
  /** Admitted times per rate key, oldest first: in the process, as the data-directory lock makes this the only gateway on its store. */
  private readonly rates = new Map<string, number[]>();
  private readonly takenOver = new Set<string>();
  /** The writer thread (specs stop it to see how the store copes). */
  private readonly worker;
  private stopping = false;

  private constructor(
    private readonly conn: Database.Database,
    private readonly writer: Writer,
    private readonly lock: ReturnType<typeof lockDataDir> | undefined,
    private readonly opts: SqliteStoreOptions,
    private readonly reader: ReaderDb,
  ) {
    super(sqliteDb(conn), opts, null, reader);
    const worker = (this.worker = writer.worker);
    let lastError: Error | undefined;
    worker.on('error', (err) => (lastError = err));
    worker.on('exit', (code) => {
      if (this.stopping) return;
      const err = new StoreError('unavailable', `the store writer thread stopped (exit code ${code})${lastError ? `: ${lastError.message}` : ''}`, { cause: lastError });
      opts.log.error({ err: lastError, code }, 'store writer thread stopped; writes are unavailable');
      this.batcher.fail(err);
      writer.abandon(err);
    });
    worker.unref(); // referenced only while a batch is in flight
  }

  /** Locks the data directory (else `locked`, before touching the database), migrates and starts the writer. */
  static async open(opts: SqliteStoreOptions): Promise<SqliteStore> {
    mkdirSync(opts.dataDir, { recursive: true });
    const lock = opts.lock === false ? undefined : lockDataDir(opts.dataDir);
    const file = join(opts.dataDir, DB_FILE);
    let db: Database.Database | undefined;
    try {
      const writer = await startWriter(file, opts.durability, () => {
        db = new Database(file);
        db.pragma('busy_timeout = 5000');
        newFileIncremental(db);
        db.pragma('journal_mode = WAL'); // persistent (https://www.sqlite.org/wal.html#persistence_of_wal_mode)
        db.pragma(`synchronous = ${opts.durability === 'fsync' ? 'FULL' : 'NORMAL'}`); // for the migration's commit
        const { from, to } = migrate(db);
        if (from !== to) opts.log.info({ file, from, to }, 'store schema migrated');
        db.prepare(sql.outbox.releaseLeases).run(); // the process before's outbox leases (the directory is ours now)
        db.pragma('query_only = ON'); // every write goes through the writer thread
      });
      return new SqliteStore(db!, writer, lock, opts, startReader(file, sqliteDb(db!)));
    } catch (err) {
      db?.close();
      lock?.release();
      throw err;
    }
  }

  override claimRuns(limit: number, startedAt: string, rules?: ClaimRules): Promise<RunRecord[]> {
    this.claimed = true;
    return super.claimRuns(limit, startedAt, rules);
  }

  takeRate(key: string, limit: number): Promise<number> {
    return this.guard(async () => {
      const now = Date.now();
      let times = this.rates.get(key);
      if (times === undefined) this.rates.set(key, (times = []));
      let gone = 0;
      while (gone < times.length && times[gone]! <= now - RATE_WINDOW_MS) gone++;
      if (gone > 0) times.splice(0, gone);
      if (times.length >= limit) return Math.max(1, times[times.length - limit]! + RATE_WINDOW_MS - now);
      times.push(now);
      return 0;
    });
  }

  returnRate(key: string): Promise<void> {
    return this.guard(async () => void this.rates.get(key)?.pop());
  }

  /** The only instance: runs running before this store claimed any are the process before's, each handed out once. */
  async takeOver(limit: number): Promise<TakenOver> {
    if (this.claimed) return this.guard(async () => ({ runs: [], deliveries: 0 }));
    const runs = (await this.listRuns({ status: 'running', limit: limit + this.takenOver.size })).filter((r) => !this.takenOver.has(r.runId)).slice(0, limit);
    for (const r of runs) this.takenOver.add(r.runId);
    return { runs, deliveries: 0 };
  }

  /** The only instance is the leader, at once; `now` triggers stay in the process. */
  lead(handlers: LeaderHandlers): Promise<Leadership> {
    return this.guard(async () => {
      handlers.onLeader(true);
      return { stop: async () => {} };
    });
  }

  protected override async giveBack(): Promise<boolean> {
    return (await this.writer.giveBack(GIVE_BACK_PAGES)) > 0;
  }

  pragmas(): Promise<WriterPragmas> {
    return this.guard(() => this.writer.inspect());
  }

  commitProblem(): string | undefined {
    if (this.goneError) return 'the database file is no longer the one opened; restart hookrelay';
    if (this.batcher.broken()) return 'the store writer stopped; restart hookrelay';
    return this.health.problem();
  }

  protected async shutdown(): Promise<void> {
    this.maintenance.stop();
    this.state = 'closing'; // new calls reject from here on; queued writes still commit
    await this.batcher.idle();
    await this.settled();
    await this.reader.close();
    this.conn.close();
    if (!this.batcher.broken() || this.goneError) await this.stopWriter();
    this.lock?.release(); // last: the database is closed, the next owner may take it
    this.state = 'closed';
  }

  protected override busy(busy: boolean): void {
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  protected async commitBatch(ops: WriteOp[]): Promise<BatchOutcome<StoreError>> {
    const reply = await this.writer.batch(ops);
    if (reply.error?.code === STORE_GONE) throw this.storeGone(reply.error.message);
    if (reply.error) {
      const err = sqliteStoreError(reply.error, 'unavailable');
      this.health.failed(err, sqliteProblem(reply.error));
      throw err;
    }
    if (reply.ms > SLOW_COMMIT_MS) this.opts.log.warn({ ms: Math.round(reply.ms), ops: ops.length }, 'slow store commit');
    const failed = reply.failed?.map(([i, e]) => [i, sqliteStoreError(e)] as [number, StoreError]);
    const down = failed?.find(([, e]) => isStoreDown(e));
    if (down) this.health.failed(down[1], sqliteProblem(down[1].cause as { code?: string; message: string }));
    else this.health.committed();
    return { values: reply.values, failed };
  }

  /** The database file (or its WAL) is not the one opened: fails this batch and every later call, and says so once. */
  private storeGone(what: string): StoreError {
    this.goneError = new StoreError('unavailable', `${what} while the store was open; nothing more is stored until hookrelay is restarted`);
    this.opts.log.error(
      { what },
      'store database file removed or replaced under the running server: requests that need the store get 503 from now on; stop hookrelay, put the file back from a backup if you have one, and start it again (a start without it creates an empty store)',
    );
    this.batcher.fail(this.goneError);
    return this.goneError;
  }

  private async stopWriter(): Promise<void> {
    this.stopping = true;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    const timer = setTimeout(() => {
      this.opts.log.warn('store writer did not stop within 10 s; terminating it');
      void this.worker.terminate();
    }, 10_000).unref();
    this.worker.ref();
    this.worker.postMessage({ type: 'close' });
    await exited;
    clearTimeout(timer);
  }
}

/**
 * A database made from here on gives the pages purges free back to the file system
 * (maintenance.ts), which it can only be told before its first table
 * (https://www.sqlite.org/pragma.html#pragma_auto_vacuum); an older one keeps its setting until
 * `hookrelay store vacuum`. Before WAL mode, which writes the file's header.
 */
export function newFileIncremental(db: Database.Database): void {
  db.pragma('auto_vacuum = INCREMENTAL');
}

/** The read side beside a running server (`hookrelay events`, `runs`, `requests`): no lock, no migration; not read-only, so that it removes the `-wal`/`-shm` it may leave. */
export function openSqliteReader(dataDir: string): StoreReader & { db: Database.Database } {
  const file = join(dataDir, DB_FILE);
  // better-sqlite3 refuses a missing folder before SQLite does, with a message of its own.
  if (!existsSync(file)) throw new StoreError('unavailable', `no store yet at ${dataDir} (\`hookrelay serve\` creates it there)`);
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    db.pragma('query_only = ON');
    db.pragma('busy_timeout = 5000');
    const version = db.pragma('user_version', { simple: true }) as number;
    refuseOtherSchema(`at ${file}`, version, SCHEMA_VERSION);
  } catch (err) {
    db?.close();
    if (err instanceof StoreError) throw err;
    throw new StoreError('unavailable', `cannot read the store at ${file}: ${(err as Error).message}`, { cause: err });
  }
  const conn = db;
  return readerOf(sqliteDb(conn), async () => void conn.close(), { db: conn });
}
