import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { silentLogger } from '../../../support/silent-logger.js';
import { PostgresStore } from '../../../../src/store/postgres.js';
import { SqliteStore } from '../../../../src/store/sqlite.js';
import type { Sql } from '../../../../src/store/dialect.js';
import type { Store } from '../../../../src/store/store.js';
import { freshDatabase, truncateAll } from '../../../support/postgres.js';
import { STORE_SPEC_OPTIONS, PG_SPEC_OPTIONS } from '../../../support/store-options.js';

/** What a contract spec may set when it opens a store. */
export interface OpenOptions {
  clock?: () => Date;
  retainDays?: number;
  purgeEveryMs?: number;
  idempotencyWindowSeconds?: number;
  keysPurgeEveryMs?: number;
  batchMax?: number;
}

/** A store with the maintenance calls and counters both backends have beside {@link Store}. */
export type TestStore = Store & {
  purgeExpired(): Promise<Record<'runs' | 'history' | 'events' | 'outbox', number>>;
  purgeExpiredKeys(): Promise<number>;
  stats(): { commits: number; ops: number; largestBatch: number };
};

/**
 * One backend under the shared store specs (spec/unit/store/contract/): each spec starts from
 * an empty store (`reset`), may open it several times (a reopen sees what was committed), and
 * may count a table's rows behind the store's back.
 */
export interface Harness {
  name: string;
  setup(): Promise<void>;
  reset(): Promise<void>;
  open(opts?: OpenOptions): Promise<TestStore>;
  /** A second store on the same data, beside an open one (another process, another instance). */
  openOther(): Promise<TestStore>;
  count(table: string): Promise<number>;
  /** Runs `sql` (each dialect's text) on the data behind the store's back, e.g. to seed a large table fast. */
  exec(sql: Sql): Promise<void>;
  /**
   * Makes reads of `table` wait until the returned release is called (PostgreSQL: an ACCESS
   * EXCLUSIVE lock). SQLite has no such lock for a WAL reader: it resolves at once, and a spec
   * makes its reads long with rows instead.
   */
  lockTable(table: string): Promise<() => Promise<void>>;
  /** How the database would run `sql` (of src/store/sql/) with `params`, behind the store's back: see {@link QueryPlan}. */
  plan(sql: Sql, params: readonly unknown[]): Promise<QueryPlan>;
  teardown(): Promise<void>;
}

/**
 * A query plan in both dialects' terms: the tables (or indexes) read from end to end, the
 * indexes searched, and whether rows are sorted after reading. PostgreSQL is asked with
 * sequential scans and sorts disabled, so that a plan still holding one has no index to use
 * instead (on a small table it would otherwise prefer them).
 */
export interface QueryPlan {
  scanned: string[];
  searched: string[];
  sorted: boolean;
  text: string;
}

/** `$n` → `?` bound in order, as src/store/dialect.ts does. */
function sqliteText(sql: Sql, params: readonly unknown[]): [string, unknown[]] {
  const order: number[] = [];
  const text = (typeof sql === 'string' ? sql : sql.sqlite).replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?'));
  return [text, order.map((i) => params[i])];
}

function sqlitePlan(details: string[]): QueryPlan {
  const plan: QueryPlan = { scanned: [], searched: [], sorted: false, text: details.join(' | ') };
  for (const d of details) {
    const scan = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(d);
    if (scan) plan.scanned.push(scan[2] ?? scan[1]!);
    const search = /^SEARCH (\w+) USING (?:(?:COVERING )?INDEX (\w+)|INTEGER PRIMARY KEY|PRIMARY KEY)/.exec(d);
    if (search) plan.searched.push(search[2] ?? `${search[1]} primary key`);
    if (/^USE TEMP B-TREE FOR (?:RIGHT PART OF )?ORDER BY/.test(d)) plan.sorted = true;
  }
  return plan;
}

interface PgNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Index Cond'?: string; Plans?: PgNode[] }

function pgPlan(root: PgNode): QueryPlan {
  const plan: QueryPlan = { scanned: [], searched: [], sorted: false, text: '' };
  const lines: string[] = [];
  const walk = (n: PgNode) => {
    lines.push([n['Node Type'], n['Index Name'] ?? n['Relation Name'], n['Index Cond']].filter(Boolean).join(' '));
    if (n['Node Type'] === 'Seq Scan') plan.scanned.push(n['Relation Name']!);
    if (/^Index (Only )?Scan$/.test(n['Node Type'])) (n['Index Cond'] ? plan.searched : plan.scanned).push(n['Index Name']!);
    if (/Sort$/.test(n['Node Type'])) plan.sorted = true;
    n.Plans?.forEach(walk);
  };
  walk(root);
  plan.text = lines.join(' | ');
  return plan;
}

/**
 * The lifecycle every contract suite shares, registered in the calling `describe`: each spec
 * starts from an empty store, and every store it opened is closed after it. Returns the
 * suite's `open`; with `clock`, stores read the suite's clock unless a spec gives its own.
 */
export function storesFor(h: Harness, clock?: () => Date): (opts?: OpenOptions) => Promise<TestStore> {
  const opened: TestStore[] = [];
  beforeEach(() => h.reset());
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  return async (opts = {}) => {
    const s = await h.open(clock ? { clock, ...opts } : opts);
    opened.push(s);
    return s;
  };
}

/** {@link storesFor} on a clock a spec sets (`clock.now`, ms since the epoch), back at `start` before each spec. */
export function storesAt(h: Harness, start: number): { clock: { now: number }; open: ReturnType<typeof storesFor> } {
  const clock = { now: start };
  beforeEach(() => {
    clock.now = start;
  });
  return { clock, open: storesFor(h, () => new Date(clock.now)) };
}

/** SQLite: a new data directory per spec. */
export function sqliteHarness(): Harness {
  let dir: string | undefined;
  return {
    name: 'sqlite',
    setup: async () => {},
    reset: async () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = mkdtempSync(join(tmpdir(), 'hookrelay-contract-'));
    },
    open: (opts = {}) => SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir!, durability: 'os', log: silentLogger, ...opts }),
    // The data-directory lock forbids exactly this in the product; specs of the claim's rules leave it out.
    openOther: () => SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir!, durability: 'os', log: silentLogger, lock: false }),
    count: async (table) => {
      const db = new Database(join(dir!, 'hookrelay.db'), { readonly: true });
      try {
        return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
    exec: async (sql) => {
      const db = new Database(join(dir!, 'hookrelay.db'));
      try {
        db.exec(typeof sql === 'string' ? sql : sql.sqlite);
      } finally {
        db.close();
      }
    },
    lockTable: async () => async () => {},
    plan: async (sql, params) => {
      const db = new Database(join(dir!, 'hookrelay.db'), { readonly: true });
      try {
        const [text, bound] = sqliteText(sql, params);
        return sqlitePlan((db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...bound) as { detail: string }[]).map((r) => r.detail));
      } finally {
        db.close();
      }
    },
    teardown: async () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** PostgreSQL: one database per suite, its tables emptied before each spec. */
const LOG_OF_A_FIELD = `INSERT INTO requests (at, method, path, route, status, ms, replayed)
  SELECT '2026-01-01T00:00:00.000Z', 'POST', '/hooks/x', 'route-' || (i % 200), CASE WHEN i % 100 = 0 THEN 500 WHEN i % 50 = 0 THEN 401 ELSE 200 END, 1, 0
  FROM generate_series(1, 20000) AS i WHERE (SELECT count(*) FROM requests) < 20000;
  INSERT INTO events (id, kind, text, source, at, unsafe, req_seq, req_lag, req_route, req_status, req_ms, req_path)
  SELECT 'e' || i, 'wake', 't', 'wake', ${Date.parse('2026-01-01T00:00:00.000Z')}, 0, CASE WHEN i % 10 > 0 THEN 100000 + i END, 0, 'route-' || (i % 200), 200, 1, '/hooks/x'
  FROM generate_series(1, 20000) AS i WHERE (SELECT count(*) FROM events) < 20000;
  ANALYZE requests; ANALYZE events`;

export function postgresHarness(label: string): Harness {
  let url: string | undefined;
  let migrated = false;
  return {
    name: 'postgres',
    setup: async () => {
      url = await freshDatabase(label);
    },
    reset: async () => {
      if (migrated) await truncateAll(url!);
    },
    open: async (opts = {}) => {
      const s = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url: url!, poolSize: 10, log: silentLogger, ...opts });
      migrated = true;
      return s;
    },
    openOther: () => PostgresStore.open({ ...PG_SPEC_OPTIONS, url: url!, poolSize: 10, log: silentLogger }),
    count: async (table) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
      } finally {
        await c.end();
      }
    },
    exec: async (sql) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(typeof sql === 'string' ? sql : sql.pg);
      } finally {
        await c.end();
      }
    },
    lockTable: async (table) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`BEGIN; LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      return async () => {
        await c.query('COMMIT');
        await c.end();
      };
    },
    plan: async (sql, params) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        // PostgreSQL chooses by statistics, and on an empty log any index will do: give it a log of
        // a field's shape first (many routes, mostly 2xx, most accepted ones kept on their events), so that its choice is the one it makes there.
        await c.query(LOG_OF_A_FIELD);
        await c.query('SET enable_seqscan = off; SET enable_sort = off; SET enable_bitmapscan = off');
        const { rows } = await c.query<{ 'QUERY PLAN': [{ Plan: PgNode }] }>(`EXPLAIN (FORMAT JSON) ${typeof sql === 'string' ? sql : sql.pg}`, [...params]);
        return pgPlan(rows[0]!['QUERY PLAN'][0].Plan);
      } finally {
        await c.end();
      }
    },
    teardown: async () => {},
  };
}
