import type Database from 'better-sqlite3';
import type pg from 'pg';
import { pgStoreError, sqliteStoreError } from './db-errors.js';
import { StoreError } from './store.js';

/** A statement: one text for both, or each dialect's where they really differ. Placeholders are `$n`. */
export type Sql = string | { sqlite: string; pg: string };

/** The small port the store is written over (pg-boss's plans over its dialect): `$n` statements on better-sqlite3 or pg. */
export interface Db {
  readonly kind: 'sqlite' | 'pg';
  all<R>(sql: Sql, params?: readonly unknown[]): Promise<R[]>;
  get<R>(sql: Sql, params?: readonly unknown[]): Promise<R | undefined>;
  run(sql: Sql, params?: readonly unknown[]): Promise<number>;
  /** Inserts rows, one statement each on SQLite, one `unnest` on PostgreSQL; the tail binds `extra` after the columns. */
  insert<R = never>(into: Insert, rows: readonly unknown[][], extra?: readonly unknown[]): Promise<R[]>;
  /** Whether `err`, thrown inside a transaction, is one statement's own failure that leaves the transaction usable. */
  failsAlone(err: unknown): boolean;
  /** A failure of this database as a StoreError. */
  storeError(err: unknown): StoreError;
  transaction<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /** LIMIT's value for `n` rows: +∞ is none, anything not a positive number zero. */
  limit(n: number): number | null;
}

const pick = (sql: Sql, kind: Db['kind']) => (typeof sql === 'string' ? sql : sql[kind]);

/** An INSERT of rows of `columns`, each dialect's text built once. */
type Insert = ReturnType<typeof insertInto>;

/** A column an INSERT computes rather than binds: each dialect's expression, over the bound columns (`$n` on SQLite, their names on PostgreSQL). */
export interface Computed {
  column: string;
  sqlite: string;
  pg: string;
}

/** `types`: the columns' PostgreSQL types; `tail` (ON CONFLICT, RETURNING) numbers its values after the columns. */
export function insertInto(table: string, columns: string, types: string, tail = '', computed?: Computed) {
  const width = columns.split(',').length;
  const marks = Array.from({ length: width }, (_, i) => `$${i + 1}`).join(', ');
  const casts = types.split(',').map((t, i) => `$${i + 1}::${t.trim()}[]`).join(', ');
  const into = computed ? `${columns}, ${computed.column}` : columns;
  return {
    sqlite: `INSERT INTO ${table} (${into}) VALUES (${marks}${computed ? `, ${computed.sqlite}` : ''}) ${tail}`,
    // WITH ORDINALITY … ORDER BY: identities (seq) are handed out in the order of `rows`.
    pg: `INSERT INTO ${table} (${into}) SELECT ${columns}${computed ? `, ${computed.pg}` : ''} FROM unnest(${casts}) WITH ORDINALITY AS u(${columns}, ord) ORDER BY ord ${tail}`,
    width,
  };
}

function rowLimit<T>(n: number, none: T): number | T {
  if (n === Number.POSITIVE_INFINITY) return none;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

interface Prepared {
  stmt: Database.Statement<unknown[]>;
  reader: boolean;
  /** The `$n` of each `?`, in order: `$2 … $1 … $2` binds the second value twice. */
  order: number[];
}

/** better-sqlite3 binds `?` by position: each `$n` becomes a `?` bound to the n-th value. */
export function sqliteDb(db: Database.Database): Db {
  const cache = new Map<string, Prepared>();
  const prepare = (sql: Sql) => {
    const text = pick(sql, 'sqlite');
    let p = cache.get(text);
    if (!p) {
      const order: number[] = [];
      const stmt = db.prepare<unknown[]>(text.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?')));
      p = { stmt, reader: stmt.reader, order };
      cache.set(text, p);
    }
    return p;
  };
  const bind = (p: Prepared, params: readonly unknown[]) => p.order.map((i) => params[i]);
  const self: Db = {
    kind: 'sqlite',
    all: async <R>(sql: Sql, params: readonly unknown[] = []) => {
      const p = prepare(sql);
      return p.stmt.all(...bind(p, params)) as R[];
    },
    get: async <R>(sql: Sql, params: readonly unknown[] = []) => {
      const p = prepare(sql);
      return p.stmt.get(...bind(p, params)) as R | undefined;
    },
    run: async (sql, params = []) => {
      const p = prepare(sql);
      return p.stmt.run(...bind(p, params)).changes;
    },
    insert: async <R>(into: Insert, rows: readonly unknown[][], extra: readonly unknown[] = []) => {
      if (rows.length === 0) return [];
      const p = prepare(into);
      const out: R[] = [];
      for (const row of rows) {
        const args = bind(p, extra.length ? [...row, ...extra] : row);
        if (p.reader) out.push(...(p.stmt.all(...args) as R[]));
        else p.stmt.run(...args);
      }
      return out;
    },
    transaction: async (fn) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const value = await fn(self);
        db.exec('COMMIT');
        return value;
      } catch (err) {
        // SQLite may have rolled back already (https://www.sqlite.org/lang_transaction.html).
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      }
    },
    // Some errors (SQLITE_FULL, SQLITE_IOERR, …) roll the whole transaction back
    // (https://www.sqlite.org/lang_transaction.html, "Response To Errors Within A Transaction").
    failsAlone: () => db.inTransaction,
    storeError: (err) => sqliteStoreError(err),
    limit: (n) => rowLimit(n, -1),
  };
  return self;
}

/** PostgreSQL's text cannot hold U+0000: stored as U+FFFD rather than failing a request the sender would retry forever. */
const pgText = (v: unknown): unknown => (Array.isArray(v) ? v.map(pgText) : typeof v === 'string' && v.includes('\0') ? v.replaceAll('\0', '\uFFFD') : v);

export function pgDb(client: Pick<pg.ClientBase, 'query'>, connect?: () => Promise<pg.PoolClient>): Db {
  const query = async <R extends pg.QueryResultRow>(sql: Sql, params: readonly unknown[]) =>
    client.query<R>(pick(sql, 'pg'), params.map(pgText));
  return {
    kind: 'pg',
    all: async <R>(sql: Sql, params: readonly unknown[] = []) => (await query(sql, params)).rows as R[],
    get: async <R>(sql: Sql, params: readonly unknown[] = []) => (await query(sql, params)).rows[0] as R | undefined,
    run: async (sql, params = []) => (await query(sql, params)).rowCount ?? 0,
    insert: async <R>(into: Insert, rows: readonly unknown[][], extra: readonly unknown[] = []) => {
      if (rows.length === 0) return [];
      const cols = Array.from({ length: into.width }, (_, i) => rows.map((r) => r[i]));
      return (await query(into, [...cols, ...extra])).rows as R[];
    },
    transaction: async (fn) => {
      if (!connect) throw new Error('no transactions on this connection');
      const c = await connect();
      let broken: unknown;
      try {
        await c.query('BEGIN');
        const value = await fn(pgDb(c));
        await c.query('COMMIT');
        return value;
      } catch (err) {
        broken = err;
        await c.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        // A client whose connection failed is destroyed rather than handed to the next caller.
        c.release(broken !== undefined && pgStoreError(broken).code === 'unavailable' ? (broken as Error) : undefined);
      }
    },
    // Integrity (SQLSTATE class 23) or a value the column cannot take (22); not the connection's.
    failsAlone: (err) => err instanceof StoreError || /^2[23]/.test(String((err as { code?: unknown })?.code ?? '')),
    storeError: pgStoreError,
    limit: (n) => rowLimit(n, null),
  };
}
