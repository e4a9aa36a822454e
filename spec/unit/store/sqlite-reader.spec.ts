import { expect } from 'chai';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../support/silent-logger.js';
import { openSqliteReader, SqliteStore } from '../../../src/store/sqlite.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import type { NewEvent } from '../../../src/store/records.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const ev = (id: string, text = `text ${id}`): NewEvent => ({
  id, kind: 'wake', text, source: 'wake', at: '2025-01-01T00:00:00.000Z', unsafe: false,
});

describe('store/sqlite: reads', () => {
  let root: string;
  let dir: string;
  let store: SqliteStore;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'hookrelay-reader-'));
    dir = join(root, 'data');
    store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });
  });
  afterEach(async () => {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  describe('SqliteReader.openReadOnly (hookrelay events / runs)', () => {
    it('reads beside an open store, without its lock, and sees each commit', async () => {
      await store.accept([ev('e1')], []);
      const reader = openSqliteReader(dir);
      try {
        expect((await reader.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['e1']);
        await store.accept([ev('e2')], []);
        expect((await reader.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['e1', 'e2']);
        expect(() => reader.db.exec("INSERT INTO state (key, value) VALUES ('k', 'v')")).to.throw(/readonly/);
      } finally {
        await reader.close();
      }
    });

    it('leaves no -wal or -shm file behind when it was the only one open', async () => {
      await store.accept([ev('e1')], []);
      await store.close();
      expect(existsSync(join(dir, 'hookrelay.db-wal')), 'a clean close removes the WAL').to.equal(false);
      const reader = openSqliteReader(dir);
      expect((await reader.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['e1']);
      await reader.close();
      expect(existsSync(join(dir, 'hookrelay.db-wal'))).to.equal(false);
      expect(existsSync(join(dir, 'hookrelay.db-shm'))).to.equal(false);
    });

    it('creates nothing where there is no store, and says what to do', () => {
      const missing = join(root, 'nowhere', 'data');
      expect(() => openSqliteReader(missing)).to.throw(`no store yet at ${missing}`).with.property('code', 'unavailable');
      expect(existsSync(join(root, 'nowhere'))).to.equal(false);
    });

    it('refuses a store at another schema version: older → run serve to migrate; newer → upgrade', async () => {
      await store.close();
      const file = join(dir, 'hookrelay.db');
      const setVersion = (v: number) => {
        const db = new Database(file);
        db.pragma(`user_version = ${v}`);
        db.close();
      };
      setVersion(SCHEMA_VERSION - 1);
      expect(() => openSqliteReader(dir)).to.throw(/run `hookrelay serve` once to migrate it/);
      setVersion(SCHEMA_VERSION + 1);
      expect(() => openSqliteReader(dir)).to.throw(/newer than this hookrelay understands .*upgrade hookrelay/);
      setVersion(SCHEMA_VERSION);
      store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });
    });
  });
});
