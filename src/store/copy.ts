import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../config/types.js';
import { pgStoreError } from './db-errors.js';
import { pgDb, sqliteDb, type Db } from './dialect.js';
import { redactUrl } from './postgres-pool.js';
import { openMigrated } from './postgres-schema.js';
import { lockDataDir } from './sqlite-lock.js';
import { DB_FILE, newFileIncremental } from './sqlite.js';
import { FILL_READY, migrate } from './sqlite-schema.js';
import { StoreError } from './store.js';

/** `hookrelay store copy` (CONTRACT.md §10): everything one store holds, events with their seq, into another. */

/** A table to copy and the column it is read in order of (its primary key). */
const COPY_TABLES = [
  { table: 'events', key: 'seq' },
  { table: 'runs', key: 'seq' },
  { table: 'history', key: 'seq' },
  { table: 'outbox', key: 'id' },
  { table: 'idempotency', key: 'key' },
  { table: 'state', key: 'key' },
  { table: 'paused', key: 'mapping' },
  { table: 'held_events', key: 'seq' },
] as const;

type CopyRow = Record<string, string | number | null>;
export type CopyCounts = Record<(typeof COPY_TABLES)[number]['table'], number>;

/** One side of a copy, migrated, nothing else running on it; `where` names it in messages (a URL without its password). */
interface Side {
  where: string;
  /** Runs `fn` on the store, its failures as the CLI reports them. */
  use<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Opens the store of `config` for copying. A SQLite store in use by a running server is refused (its lock). */
async function openSide(config: Config): Promise<Side> {
  if (config.store.kind === 'postgres') {
    const url = config.store.url!;
    const pool = await openMigrated({ url, max: 2, onIdleError: () => {} });
    const db = pgDb(pool, () => pool.connect());
    return { where: redactUrl(url), use: (fn) => fn(db).catch((err: unknown) => Promise.reject(pgStoreError(err))), close: () => pool.end() };
  }
  mkdirSync(config.dataDir, { recursive: true });
  const lock = lockDataDir(config.dataDir);
  let conn: Database.Database;
  try {
    conn = new Database(join(config.dataDir, DB_FILE));
    newFileIncremental(conn);
    conn.pragma('journal_mode = WAL');
    migrate(conn);
  } catch (err) {
    lock.release();
    throw err;
  }
  const db = sqliteDb(conn);
  const close = async () => {
    conn.close();
    lock.release();
  };
  return { where: join(config.dataDir, DB_FILE), use: (fn) => fn(db), close };
}

/** A row without the request-log columns folded into it (sql/requests.ts): the request log is not copied. */
function notLogged(row: CopyRow): CopyRow {
  return Object.fromEntries(Object.entries(row).filter(([column]) => !column.startsWith('req_')));
}

/** Inserts rows as they are (keys and seq included), in one transaction. */
function importRows(db: Db, table: string, rows: CopyRow[]): Promise<unknown> {
  if (db.kind === 'pg') return db.run(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`, [JSON.stringify(rows)]);
  const columns = Object.keys(rows[0]!);
  const insert = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`;
  return db.transaction(async (tx) => {
    for (const row of rows) await tx.run(insert, Object.values(row));
  });
}

/** The last event seq ever handed out (not only the largest left): seq is never reused. */
async function lastEventSeq(db: Db): Promise<number> {
  const row = await db.get<{ n: number }>({
    sqlite: "SELECT seq AS n FROM sqlite_sequence WHERE name = 'events'",
    pg: "SELECT last_value AS n FROM pg_sequences WHERE sequencename = pg_get_serial_sequence('events', 'seq')::regclass::text AND last_value IS NOT NULL",
  });
  return Number(row?.n ?? 0);
}

/** After the import: counters continue after what was copied (events after the source's last seq ever), derived data is rebuilt. */
function finishImport(db: Db, lastSeq: number): Promise<void> {
  return db.transaction(async (tx) => {
    if (tx.kind === 'sqlite') {
      await tx.run("UPDATE sqlite_sequence SET seq = MAX(seq, $1) WHERE name = 'events'", [lastSeq]);
      await tx.run("INSERT INTO sqlite_sequence (name, seq) SELECT 'events', $1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events')", [lastSeq]);
      // The claimable heads, as migration v2 builds them: rows came in any status order.
      await tx.run('DELETE FROM ready');
      await tx.run(FILL_READY);
      return;
    }
    await tx.run(`SELECT setval(pg_get_serial_sequence('events', 'seq'), GREATEST($1::bigint, (SELECT COALESCE(MAX(seq), 0) FROM events), 1), GREATEST($1::bigint, (SELECT COALESCE(MAX(seq), 0) FROM events)) > 0)`, [lastSeq]);
    for (const [table, key] of [['runs', 'seq'], ['history', 'seq'], ['outbox', 'id'], ['held_events', 'seq']] as const) {
      await tx.run(`SELECT setval(pg_get_serial_sequence('${table}', '${key}'), GREATEST((SELECT COALESCE(MAX(${key}), 0) FROM ${table}), 1), (SELECT COUNT(*) FROM ${table}) > 0)`);
    }
  });
}

/** Copies everything from `from` into `to`, `batch` rows at a time, telling `progress` after each batch. */
export async function copyStore(from: Config, to: Config, progress: (line: string) => void, batch = 1000): Promise<CopyCounts> {
  const source = await openSide(from);
  let target: Side | undefined;
  try {
    target = await openSide(to);
    for (const { table } of COPY_TABLES) {
      if (await target.use((db) => db.get(`SELECT 1 FROM ${table} LIMIT 1`))) {
        throw new StoreError('constraint', `the target store (${target.where}) is not empty: copy into a new database or data directory, or empty this one first`);
      }
    }
    const counts = {} as CopyCounts;
    for (const { table, key } of COPY_TABLES) {
      counts[table] = 0;
      let after: string | number | undefined;
      for (;;) {
        const from = after;
        const rows = await source.use((db) => from === undefined
          ? db.all<CopyRow>(`SELECT * FROM ${table} ORDER BY ${key} LIMIT $1`, [batch])
          : db.all<CopyRow>(`SELECT * FROM ${table} WHERE ${key} > $1 ORDER BY ${key} LIMIT $2`, [from, batch]));
        if (rows.length === 0) break;
        await target.use((db) => importRows(db, table, rows.map(notLogged)));
        counts[table] += rows.length;
        after = rows[rows.length - 1]![key] as string | number;
        progress(`${table}: ${counts[table]} copied`);
        if (rows.length < batch) break;
      }
    }
    const lastSeq = await source.use(lastEventSeq);
    await target.use((db) => finishImport(db, lastSeq));
    return counts;
  } finally {
    await target?.close();
    await source.close();
  }
}
