import { expect } from 'chai';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/log.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { SqliteReader } from '../../../src/store/sqlite-reader.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import type { NewEvent } from '../../../src/store/store.js';

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
    store = await SqliteStore.open({ dataDir: dir, durability: 'os', log: silentLogger });
  });
  afterEach(async () => {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  describe('listEvents with a byte budget', () => {
    const KB100 = 100 * 1024;
    const MIB = 1024 * 1024;

    it('bounds a page of large events by the budget, not by the limit, and pages through each exactly once', async () => {
      const n = 64; // 6.4 MB in all
      for (let i = 0; i < n; i += 16) {
        await store.accept(Array.from({ length: 16 }, (_, j) => ev(`e${i + j}`, String(i + j).padEnd(KB100, 'x'))), []);
      }
      const page = await store.listEvents(0, 1000, MIB);
      expect(page.length).to.be.at.least(1).and.at.most(10);
      expect(page.reduce((s, e) => s + e.text.length, 0)).to.be.at.most(MIB);
      expect(page.map((e) => e.id)).to.deep.equal(Array.from({ length: page.length }, (_, i) => `e${i}`));

      const seen: string[] = [];
      let pages = 0;
      for (let after = 0; ; pages++) {
        const p = await store.listEvents(after, 1000, MIB);
        if (p.length === 0) break;
        seen.push(...p.map((e) => e.id));
        after = p[p.length - 1]!.seq;
      }
      expect(seen).to.deep.equal(Array.from({ length: n }, (_, i) => `e${i}`));
      expect(pages).to.be.at.least(Math.ceil((n * KB100) / MIB));
      // Without a budget the limit alone still decides, as before.
      expect(await store.listEvents(0, 1000)).to.have.length(n);
    });

    it('always returns at least one event, even one larger than the budget', async () => {
      await store.accept([ev('big', 'y'.repeat(2 * KB100)), ev('small')], []);
      const first = await store.listEvents(0, 1000, KB100);
      expect(first.map((e) => e.id)).to.deep.equal(['big']);
      expect((await store.listEvents(first[0]!.seq, 1000, KB100)).map((e) => e.id)).to.deep.equal(['small']);
      expect((await store.listEvents(0, 1000, 0)).map((e) => e.id)).to.deep.equal(['big']);
    });

    it('counts multi-byte text in UTF-8 bytes', async () => {
      const euro = '€'.repeat(40 * 1024); // 40 Ki characters, 120 KiB of UTF-8
      await store.accept([ev('a', euro), ev('b', euro)], []);
      expect((await store.listEvents(0, 10, 200 * 1024)).map((e) => e.id)).to.deep.equal(['a']);
    });
  });

  describe('SqliteReader.openReadOnly (hookrelay events / runs)', () => {
    it('reads beside an open store, without its lock, and sees each commit', async () => {
      await store.accept([ev('e1')], []);
      const reader = SqliteReader.openReadOnly(dir);
      try {
        expect(reader.listEvents(0, 10).map((e) => e.id)).to.deep.equal(['e1']);
        await store.accept([ev('e2')], []);
        expect(reader.listEvents(0, 10).map((e) => e.id)).to.deep.equal(['e1', 'e2']);
        expect(() => reader.db.exec("INSERT INTO state (key, value) VALUES ('k', 'v')")).to.throw(/readonly/);
      } finally {
        reader.close();
      }
    });

    it('leaves no -wal or -shm file behind when it was the only one open', async () => {
      await store.accept([ev('e1')], []);
      await store.close();
      expect(existsSync(join(dir, 'hookrelay.db-wal')), 'a clean close removes the WAL').to.equal(false);
      const reader = SqliteReader.openReadOnly(dir);
      expect(reader.listEvents(0, 10).map((e) => e.id)).to.deep.equal(['e1']);
      reader.close();
      expect(existsSync(join(dir, 'hookrelay.db-wal'))).to.equal(false);
      expect(existsSync(join(dir, 'hookrelay.db-shm'))).to.equal(false);
    });

    it('creates nothing where there is no store, and says what to do', () => {
      const missing = join(root, 'nowhere', 'data');
      expect(() => SqliteReader.openReadOnly(missing)).to.throw(`no store yet at ${missing}`).with.property('code', 'unavailable');
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
      expect(() => SqliteReader.openReadOnly(dir)).to.throw(/run `hookrelay serve` once to migrate it/);
      setVersion(SCHEMA_VERSION + 1);
      expect(() => SqliteReader.openReadOnly(dir)).to.throw(/newer than this hookrelay understands .*upgrade hookrelay/);
      setVersion(SCHEMA_VERSION);
      store = await SqliteStore.open({ dataDir: dir, durability: 'os', log: silentLogger });
    });
  });
});
