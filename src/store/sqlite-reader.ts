import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { WireError } from './sqlite-writer.js';
import { SCHEMA_VERSION, eventBytes, toEvent, toHistory, toRun, type EventRow, type RunRow } from './sqlite-schema.js';
import { toRequest, type RequestRow } from './request-rows.js';
import {
  RUN_STATUSES, type ListRequestsOptions, type RequestRecord, type RunStatus, type EventRecord, type HistoryMessage, type StoredKey,
  type ListRunsOptions, type RunRecord,
} from './records.js';
import { StoreError, type StoreErrorCode, type StoreReader } from './store.js';
import * as sql from './sql/index.js';

/** The database file, in the data directory. */
export const DB_FILE = 'hookrelay.db';

/** Maps a SQLite (or writer-side) error code to the store's. */
export function toStoreError(e: WireError, fallback: StoreErrorCode = 'failed'): StoreError {
  const code = e.code ?? '';
  const kind: StoreErrorCode =
    code === 'run_not_running' ? 'run_not_running'
    : code === 'constraint' || code.startsWith('SQLITE_CONSTRAINT') ? 'constraint'
    : /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB)/.test(code) ? 'unavailable'
    : fallback;
  return new StoreError(kind, e.message, { cause: e });
}

/** SQLite: a negative LIMIT means none. Anything not a positive number means zero rows. */
export function toLimit(n: number): number {
  if (n === Number.POSITIVE_INFINITY) return -1;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/**
 * The reads of the embedded store, over their statements (sql/*.ts) prepared once on one
 * connection. {@link SqliteStore} builds on it (over its read connection, beside the
 * writer thread); `hookrelay events` and `runs` open it alone, read-only
 * ({@link SqliteReader.openReadOnly}). Synchronous: callers wrap it in their own promises.
 */
export class SqliteReader {
  private readonly q;

  /** `db`: the connection the queries are prepared on (specs check that it writes nothing). */
  constructor(readonly db: Database.Database) {
    this.q = {
      events: db.prepare<[number, number], EventRow>(sql.events.listEvents.sqlite),
      run: db.prepare<[string], RunRow>(sql.runs.getRun.sqlite),
      runSeq: db.prepare<[string], { seq: number }>(sql.runs.runSeq.sqlite),
      runs: db.prepare<[number, number], RunRow>(sql.runs.listRuns.sqlite),
      runsWith: db.prepare<[string, number, number], RunRow>(sql.runs.listRunsWithStatus.sqlite),
      history: db.prepare<[string, number], { role: string; content: string }>(sql.history.readHistory.sqlite),
      state: db.prepare<[string], { value: string }>(sql.history.getState.sqlite),
      runCounts: db.prepare<[], { status: RunStatus; n: number }>(sql.runs.countRuns.sqlite),
      key: db.prepare<[string, string], { request_hash: string; status: number; body: string; at: string }>(sql.idempotency.findKeys.sqlite),
    };
  }

  /**
   * Opens `{dataDir}/hookrelay.db` for reading: creates no store (not the folder, not the
   * database), takes no lock, migrates nothing — so it works beside a running server, whose
   * commits each read sees (WAL). Refuses, with what to do, a missing store or one at another
   * schema version. The connection may write nothing (`query_only`), but it is not opened
   * read-only: a read-only connection that finds no `-wal`/`-shm` leaves them behind, owned
   * by whoever ran the command; this one, when it is the last to close, removes them again.
   */
  static openReadOnly(dataDir: string): SqliteReader {
    const file = join(dataDir, DB_FILE);
    // better-sqlite3 refuses a missing folder before SQLite does, with a message of its own.
    if (!existsSync(file)) throw new StoreError('unavailable', `no store yet at ${dataDir} (\`hookrelay serve\` creates it there)`);
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { fileMustExist: true });
      db.pragma('query_only = ON');
      db.pragma('busy_timeout = 5000');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version < SCHEMA_VERSION) {
        throw new StoreError('unavailable', `the store at ${file} has schema v${version}, this hookrelay reads v${SCHEMA_VERSION}: run \`hookrelay serve\` once to migrate it`);
      }
      if (version > SCHEMA_VERSION) {
        throw new StoreError('unavailable', `the store at ${file} has schema v${version}, newer than this hookrelay understands (v${SCHEMA_VERSION}): upgrade hookrelay`);
      }
      return new SqliteReader(db);
    } catch (err) {
      db?.close();
      if (err instanceof StoreError) throw err;
      const e = err as Error & { code?: string };
      throw new StoreError('unavailable', `cannot read the store at ${file}: ${e.message}`, { cause: err });
    }
  }

  /** See {@link Store.listEvents}: rows are iterated, so a budget stops the read early. */
  listEvents(after: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): EventRecord[] {
    const out: EventRecord[] = [];
    let bytes = 0;
    for (const row of this.q.events.iterate(Number(after) || 0, toLimit(limit))) {
      const size = eventBytes(row);
      if (out.length > 0 && bytes + size > maxBytes) break; // `break` ends the statement (iterator.return)
      out.push(toEvent(row));
      bytes += size;
    }
    return out;
  }

  getRun(runId: string): RunRecord | undefined {
    const row = this.q.run.get(runId);
    return row && toRun(row);
  }

  listRuns(opts: ListRunsOptions): RunRecord[] {
    const limit = toLimit(opts.limit);
    let below = Number.MAX_SAFE_INTEGER;
    if (opts.before !== undefined) {
      const from = this.q.runSeq.get(opts.before);
      if (!from) return [];
      below = from.seq;
    }
    return (opts.status ? this.q.runsWith.all(opts.status, below, limit) : this.q.runs.all(below, limit)).map(toRun);
  }

  /** Runs per status, every status present (0 for none): see {@link Store.countRuns}. */
  countRuns(): Record<RunStatus, number> {
    const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const { status, n } of this.q.runCounts.all()) counts[status] = n;
    return counts;
  }

  history(sessionKey: string, limit: number): HistoryMessage[] {
    return this.q.history.all(sessionKey, toLimit(limit)).map(toHistory);
  }

  /** Stored answers of these key hashes accepted at or after `since` (ISO time). */
  findKeys(keys: readonly string[], since: string): (StoredKey | undefined)[] {
    return keys.map((k) => {
      const row = this.q.key.get(k, since);
      return row && { requestHash: row.request_hash, status: row.status, body: row.body, at: row.at };
    });
  }

  getState(key: string): string | undefined {
    return this.q.state.get(key)?.value;
  }

  /** Listings of the request log, one statement per combination of filters, prepared on first use. */
  private readonly requestLists = new Map<string, Database.Statement<unknown[], RequestRow>>();

  /** See {@link Store.listRequests}. */
  listRequests(opts: ListRequestsOptions): RequestRecord[] {
    const { text, values } = sql.requests.listRequests(opts, () => '?');
    let stmt = this.requestLists.get(text);
    if (!stmt) {
      stmt = this.db.prepare<unknown[], RequestRow>(text);
      this.requestLists.set(text, stmt);
    }
    return stmt.all(...values, toLimit(opts.limit)).map(toRequest);
  }

  getRequest(seq: number): RequestRecord | undefined {
    if (!Number.isSafeInteger(seq)) return undefined;
    const row = this.db.prepare<[number], RequestRow>(sql.requests.getRequest.sqlite).get(seq);
    return row && toRequest(row);
  }

  close(): void {
    this.db.close();
  }
}

/** Runs a read, turning a SQLite error into a {@link StoreError}. */
export function readWith<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    const e = err as Error & { code?: string };
    return Promise.reject(err instanceof StoreError ? err : toStoreError({ message: e.message, code: e.code }));
  }
}

/** A {@link StoreReader} over {@link SqliteReader.openReadOnly}: for the read-only commands. */
export function openReadOnlyStore(dataDir: string): StoreReader {
  const reader = SqliteReader.openReadOnly(dataDir);
  let open = true;
  const read = <T>(fn: () => T): Promise<T> =>
    open ? readWith(fn) : Promise.reject(new StoreError('closed', 'the store is closed'));
  return {
    listEvents: (after, limit, maxBytes) => read(() => reader.listEvents(after, limit, maxBytes)),
    getRun: (runId) => read(() => reader.getRun(runId)),
    listRuns: (opts) => read(() => reader.listRuns(opts)),
    listRequests: (opts) => read(() => reader.listRequests(opts)),
    getRequest: (seq) => read(() => reader.getRequest(seq)),
    close: async () => {
      if (open) reader.close();
      open = false;
    },
  };
}
