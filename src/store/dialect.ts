import type Database from 'better-sqlite3';
import type pg from 'pg';
import { pgStoreError } from './db-errors.js';
import { StoreError } from './store.js';

/** A statement: one text for both, or each dialect's where they really differ. Placeholders are `$n`. */
export type Sql = string | { sqlite: string; pg: string };

/** The small port the store is written over (pg-boss's plans over its dialect): `$n` statements on better-sqlite3 or pg. */
export interface Db {
  readonly kind: 'sqlite' | 'pg';
  all<R>(sql: Sql, params?: readonly unknown[]): Promise<R[]>;
  get<R>(sql: Sql, params?: readonly unknown[]): Promise<R | undefined>;
  run(sql: Sql, params?: readonly unknown[]): Promise<number>;
  /** Inserts rows, one statement each on SQLite, one `unnest` on PostgreSQL; `tail` (ON CONFLICT, RETURNING) binds `extra` after the columns. */
  insert<R = never>(table: string, columns: string, types: string, rows: readonly unknown[][], tail?: string, extra?: readonly unknown[]): Promise<R[]>;
  /** Whether `err`, thrown inside a transaction, is one statement's own failure that leaves the transaction usable. */
  failsAlone(err: unknown): boolean;
  transaction<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /** LIMIT's value for `n` rows: +∞ is none, anything not a positive number zero. */
  limit(n: number): number | null;
}

const pick = (sql: Sql, kind: Db['kind']) => (typeof sql === 'string' ? sql : sql[kind]);
const count = (columns: string) => columns.split(',').length;

export function rowLimit<T>(n: number, none: T): number | T {
  if (n === Number.POSITIVE_INFINITY) return none;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

interface Prepared {
  stmt: Database.Statement<unknown[]>;
  /** The `$n` of each `?`, in order: `$2 … $1 … $2` binds the second value twice. */
  order: number[];
}

/** better-sqlite3 binds `?` by position: each `$n` becomes a `?` bound to the n-th value. */
export function sqliteDb(db: Database.Database): Db {
  const cache = new Map<string, Prepared>();
  const prepare = (sql: Sql, params: readonly unknown[]) => {
    const text = pick(sql, 'sqlite');
    let p = cache.get(text);
    if (!p) {
      const order: number[] = [];
      const stmt = db.prepare<unknown[]>(text.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?')));
      cache.set(text, (p = { stmt, order }));
    }
    return { stmt: p.stmt, args: p.order.map((i) => params[i]) };
  };
  const self: Db = {
    kind: 'sqlite',
    all: async <R>(sql: Sql, params: readonly unknown[] = []) => {
      const { stmt, args } = prepare(sql, params);
      return stmt.all(...args) as R[];
    },
    get: async <R>(sql: Sql, params: readonly unknown[] = []) => {
      const { stmt, args } = prepare(sql, params);
      return stmt.get(...args) as R | undefined;
    },
    run: async (sql, params = []) => {
      const { stmt, args } = prepare(sql, params);
      return stmt.run(...args).changes;
    },
    insert: async <R>(table: string, columns: string, _types: string, rows: readonly unknown[][], tail = '', extra: readonly unknown[] = []) => {
      if (rows.length === 0) return [];
      const n = count(columns);
      const marks = Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');
      const text = `INSERT INTO ${table} (${columns}) VALUES (${marks}) ${tail}`;
      const out: R[] = [];
      for (const row of rows) {
        const { stmt, args } = prepare(text, [...row, ...extra]);
        if (stmt.reader) out.push(...(stmt.all(...args) as R[]));
        else stmt.run(...args);
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
    insert: async <R>(table: string, columns: string, types: string, rows: readonly unknown[][], tail = '', extra: readonly unknown[] = []) => {
      if (rows.length === 0) return [];
      const n = count(columns);
      const cols = Array.from({ length: n }, (_, i) => rows.map((r) => r[i]));
      const casts = types.split(',').map((t, i) => `$${i + 1}::${t.trim()}[]`).join(', ');
      // WITH ORDINALITY … ORDER BY: identities (seq) are handed out in the order of `rows`.
      const text = `INSERT INTO ${table} (${columns}) SELECT ${columns} FROM unnest(${casts}) WITH ORDINALITY AS u(${columns}, ord) ORDER BY ord ${tail}`;
      return (await query(text, [...cols, ...extra])).rows as R[];
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
    limit: (n) => rowLimit(n, null),
  };
}
