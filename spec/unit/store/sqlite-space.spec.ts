import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../../../src/config/types.js';
import { silentLogger } from '../../support/silent-logger.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import { DB_FILE, SqliteStore } from '../../../src/store/sqlite.js';
import { vacuumStore } from '../../../src/store/vacuum.js';
import { DAY, event, sqliteAtVersion, T0 } from './fixtures.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const TEXT = 'x'.repeat(4000);
const pragma = (file: string, name: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma(name, { simple: true });
  } finally {
    db.close();
  }
};

/** Retention gives the space it frees back to the disk (docs/reliability.md). */
describe('store/sqlite: space given back after purges', function () {
  this.timeout(60000);
  let dir: string;
  let now: number;
  const file = () => join(dir, DB_FILE);
  const open = (retainDays = 1) => SqliteStore.open({ ...STORE_SPEC_OPTIONS, retainDays, dataDir: dir, durability: 'os', log: silentLogger, clock: () => new Date(now) });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-space-'));
    now = T0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a new store shrinks its file once a retention pass has purged most of it', async () => {
    const store = await open();
    try {
      expect(pragma(file(), 'auto_vacuum')).to.equal(2); // INCREMENTAL
      for (let b = 0; b < 20; b++) await store.accept(Array.from({ length: 100 }, (_, i) => event(`old-${b}-${i}`, T0, { text: TEXT })), []);
      now = T0 + 2 * DAY;
      await store.accept([event('new', now)], []);
      await store.pauseMapping('unrelated', true); // a write: the WAL holds the old pages until a checkpoint
      const full = statSync(file()).size;
      expect(full).to.be.above(2000 * 4000);
      expect((await store.purgeExpired()).events).to.equal(2000);
      const after = statSync(file()).size;
      expect(after, `${full} → ${after} bytes`).to.be.below(full / 4);
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['new']);
    } finally {
      await store.close();
    }
  });

  it('`hookrelay store vacuum` gives an older store its free space back and the setting to give it back from then on', async () => {
    const db = sqliteAtVersion(file(), SCHEMA_VERSION);
    const insert = db.prepare("INSERT INTO events (id, kind, text, source, at, unsafe) VALUES (?, 'wake', ?, 'wake', ?, 0)");
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`e${i}`, TEXT, T0);
    })();
    db.exec('DELETE FROM events WHERE seq > 10');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    expect(pragma(file(), 'auto_vacuum')).to.equal(0);
    const config = { dataDir: dir, store: { kind: 'sqlite' } } as Config;

    const store = await open(0);
    try {
      expect(() => vacuumStore(config), 'while a server has the store').to.throw(/already has a store open there/);
    } finally {
      await store.close();
    }
    const { before, after } = vacuumStore(config);
    expect(before).to.be.above(2000 * 4000);
    expect(after).to.be.below(before / 10);
    expect(statSync(file()).size).to.equal(after);
    expect(pragma(file(), 'auto_vacuum')).to.equal(2);
    const reopened = await open(0);
    try {
      expect((await reopened.listEvents(0, 100)).map((e) => e.id)).to.have.length(10);
    } finally {
      await reopened.close();
    }
    expect(() => vacuumStore({ ...config, store: { kind: 'postgres' } } as Config)).to.throw(/autovacuum/);
  });
});
