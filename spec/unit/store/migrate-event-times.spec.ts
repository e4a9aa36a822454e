import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { silentLogger } from '../../support/silent-logger.js';
import { pgDb, sqliteDb, type Db } from '../../../src/store/dialect.js';
import { PostgresStore } from '../../../src/store/postgres.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import type { Store } from '../../../src/store/store.js';
import { freshDatabase } from '../../support/postgres.js';
import { PG_SPEC_OPTIONS, STORE_SPEC_OPTIONS } from '../../support/store-options.js';
import { event, expectCode, iso, postgresAtVersion, sqliteAtVersion, T0 } from './fixtures.js';

/**
 * SQLite v15 and PostgreSQL v14 keep an event's and a held wake's time as integer ms: the
 * events and held wakes a store already has are converted, and read back as they did before,
 * with the request-log rows folded into them (CONTRACT.md §11).
 */

const EVENTS = 300;
const PURGED = 5;

/** Deterministic times from 1969 to 2100, in toISOString's form as the gateway stores them. */
function times(n: number): string[] {
  let x = 0x2545f491;
  const next = () => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32);
  return [iso(0), iso(-1), iso(T0), ...Array.from({ length: n - 3 }, () => iso(Math.floor(next() * 4_102_444_800_000) - 86_400_000))];
}

interface Seeded {
  events: [string, string][];
  /** The folded rows of the events left, newest first: request id and time. */
  requests: [string, string][];
  held: [string, string][];
}

/** Rows as the store before wrote them: events (every 10th with its request's row folded in, the newest purged), two held wakes of a paused mapping. */
async function seed(db: Db): Promise<Seeded> {
  const at = times(EVENTS);
  const seeded: Seeded = { events: [], requests: [], held: [] };
  for (let i = 0; i < EVENTS; i++) {
    const folded = i % 10 === 0 ? [1000 + i, i - 50, 'wake', 200, 15, '/hooks/wake', `q${i}`] : [null, null, null, null, null, null, null];
    await db.run(`INSERT INTO events (id, kind, text, source, at, unsafe, req_seq, req_lag, req_route, req_status, req_ms, req_path, req_id)
      VALUES ($1, 'wake', 'text', 'wake', $2, 0, $3, $4, $5, $6, $7, $8, $9)`, [`e${i}`, at[i], ...folded]);
    if (i >= EVENTS - PURGED) continue;
    seeded.events.push([`e${i}`, at[i]!]);
    // As v14 read it back (rows.ts unfold): the event's time less the lag.
    if (i % 10 === 0) seeded.requests.unshift([`q${i}`, iso(Date.parse(at[i]!) - (i - 50))]);
  }
  await db.run(`DELETE FROM events WHERE id IN (${Array.from({ length: PURGED }, (_, k) => `'e${EVENTS - 1 - k}'`).join(', ')})`);
  await db.run("INSERT INTO paused (mapping, at) VALUES ('p', $1)", [iso(T0)]);
  for (const [id, t] of [['h1', iso(T0 + 1)], ['h2', iso(T0 + 2)]] as const) {
    await db.run("INSERT INTO held_events (id, kind, text, source, at, unsafe) VALUES ($1, 'wake', 'held', 'mapping:p', $2, 0)", [id, t]);
    seeded.held.push([id, t]);
  }
  return seeded;
}

/** What the migrated store reads back, then its held wakes released and new rows written (the tally triggers, seq past the purged). */
async function expectReadBack(store: Store, seeded: Seeded): Promise<void> {
  const events = await store.listEvents(0, 1000);
  expect(events.map((e) => [e.id, e.at])).to.deep.equal(seeded.events);
  const requests = await store.listRequests({ limit: 1000 });
  expect(requests.map((r) => [r.requestId, r.at])).to.deep.equal(seeded.requests);
  expect(requests[0]).to.include({ method: 'POST', path: '/hooks/wake', route: 'wake', status: 200, ms: 1.5 });
  expect(await store.countHeld()).to.deep.equal({ 'mapping:p': 2 });
  expect(await store.releaseWakes('mapping:p')).to.equal(2);
  expect(await store.countHeld()).to.deep.equal({});
  await store.accept([event('h3', T0 + 3, { source: 'mapping:p', held: true })], []);
  expect(await store.countHeld()).to.deep.equal({ 'mapping:p': 1 });
  await store.accept([event('new', T0 + 4)], []);
  const after = await store.listEvents(events.at(-1)!.seq, 10);
  expect(after.map((e) => [e.id, e.at])).to.deep.equal([...seeded.held, ['new', iso(T0 + 4)]]);
  expect(after[0]!.seq, 'seq goes on past the purged events').to.be.greaterThan(EVENTS);
}

describe('store: event times as integer ms (SQLite v15, PostgreSQL v14)', function () {
  this.timeout(60000);

  describe('SQLite', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'hookrelay-v15-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const open = () => SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });
    /** Each table's columns (name, type, NOT NULL, key), indexes, triggers, strictness and CHECKs. */
    const shape = (db: Database.Database) => Object.fromEntries(['events', 'held_events'].map((t) => [t, {
      columns: (db.pragma(`table_info(${t})`) as { name: string; type: string; notnull: number; pk: number }[]).map((c) => [c.name, c.type, c.notnull, c.pk]),
      indexes: (db.pragma(`index_list(${t})`) as { name: string; unique: number; partial: number }[]).map((i) => [i.name, i.unique, i.partial]).sort(),
      triggers: db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ? ORDER BY name").all(t),
      strict: db.prepare('SELECT strict FROM pragma_table_list WHERE name = ?').get(t),
      checks: (db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").get(t) as { sql: string }).sql.match(/CHECK \((?:[^()]|\([^()]*\))*\)/g),
    }]));

    it('converts every event and held wake exactly, keeping the tables as they were but for the type of at', async () => {
      const v14 = sqliteAtVersion(join(dir, 'hookrelay.db'), 14);
      const seeded = await seed(sqliteDb(v14));
      const before = shape(v14);
      v14.close();

      const store = await open();
      try {
        await expectReadBack(store, seeded);
      } finally {
        await store.close();
      }
      const db = new Database(join(dir, 'hookrelay.db'), { readonly: true });
      try {
        const after = shape(db);
        for (const t of ['events', 'held_events']) {
          before[t]!.columns = before[t]!.columns.map((c) => (c[0] === 'at' ? ['at', 'INTEGER', 1, 0] : c));
          expect(after[t], t).to.deep.equal(before[t]);
        }
        expect(db.prepare("SELECT count(*) AS n FROM events WHERE typeof(at) <> 'integer'").get()).to.deep.equal({ n: 0 });
        expect(db.prepare("SELECT at FROM events WHERE id = 'e2'").get()).to.deep.equal({ at: T0 });
      } finally {
        db.close();
      }
    });

    it('refuses to migrate an event whose time does not parse, and leaves the store as it was', async () => {
      const v14 = sqliteAtVersion(join(dir, 'hookrelay.db'), 14);
      v14.prepare("INSERT INTO events (id, kind, text, source, at, unsafe) VALUES ('bad', 'wake', 't', 'wake', 'soon', 0)").run();
      v14.close();
      const refused = await open().then(() => undefined, (err: Error) => err);
      expect(refused?.message).to.match(/NOT NULL constraint failed: events_v15\.at/);
      const db = new Database(join(dir, 'hookrelay.db'), { readonly: true });
      try {
        expect(db.pragma('user_version', { simple: true })).to.equal(14);
        expect(db.prepare('SELECT id, at FROM events').all()).to.deep.equal([{ id: 'bad', at: 'soon' }]);
      } finally {
        db.close();
      }
    });
  });

  describe('PostgreSQL', () => {
    it('converts every event and held wake exactly to bigint', async () => {
      const url = await freshDatabase('v14');
      const v13 = await postgresAtVersion(url, 13);
      let seeded: Seeded;
      try {
        seeded = await seed(pgDb(v13));
      } finally {
        await v13.end();
      }
      const store = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 2, log: silentLogger });
      try {
        await expectReadBack(store, seeded);
      } finally {
        await store.close();
      }
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const types = await c.query("SELECT table_name, data_type, is_nullable FROM information_schema.columns WHERE column_name = 'at' AND table_name IN ('events', 'held_events') ORDER BY table_name");
        expect(types.rows).to.deep.equal([
          { table_name: 'events', data_type: 'bigint', is_nullable: 'NO' }, { table_name: 'held_events', data_type: 'bigint', is_nullable: 'NO' },
        ]);
        expect((await c.query("SELECT at FROM events WHERE id = 'e2'")).rows).to.deep.equal([{ at: String(T0) }]);
      } finally {
        await c.end();
      }
    });

    it('refuses to migrate an event whose time does not parse, and leaves the store as it was', async () => {
      const url = await freshDatabase('v14_bad');
      const v13 = await postgresAtVersion(url, 13);
      try {
        await v13.query("INSERT INTO events (id, kind, text, source, at, unsafe) VALUES ('bad', 'wake', 't', 'wake', 'soon', 0)");
        const opened = PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 2, log: silentLogger });
        await expectCode(opened, 'failed');
        expect((await v13.query('SELECT version FROM hookrelay_schema')).rows).to.deep.equal([{ version: 13 }]);
        expect((await v13.query('SELECT id, at FROM events')).rows).to.deep.equal([{ id: 'bad', at: 'soon' }]);
      } finally {
        await v13.end();
      }
    });
  });
});
