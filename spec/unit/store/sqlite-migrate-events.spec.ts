import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { silentLogger } from '../../support/silent-logger.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';
import { sqliteAtVersion } from './fixtures.js';

/**
 * SQLite v11 rebuilds `events` without the unique index on `id`: nothing reads an event by its
 * id (the cursor is seq), and the index was one more B-tree written by every accepted wake
 * (issue 34). The rebuild keeps the rows and the AUTOINCREMENT counter as they were: seq is the
 * /events cursor, and must never go back, even when the newest events had been purged.
 */
describe('store/sqlite: the v11 events rebuild', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the events and the seq counter past purged ones, and leaves events with no index on id', async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-v11-'));
    const v10 = sqliteAtVersion(join(dir, 'hookrelay.db'), 10);
    const insert = v10.prepare(`INSERT INTO events (id, kind, text, source, at, unsafe) VALUES (?, 'wake', ?, 'hook:wake', '2026-01-01T00:00:00.000Z', 1)`);
    for (let i = 1; i <= 5; i++) insert.run(`e${i}`, `text ${i}`);
    // The newest two were purged: their seqs (4, 5) must not be handed out again.
    v10.exec('DELETE FROM events WHERE seq > 3');
    v10.close();

    const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });
    try {
      expect((await store.listEvents(0, 10)).map((e) => [e.seq, e.id, e.text])).to.deep.equal([[1, 'e1', 'text 1'], [2, 'e2', 'text 2'], [3, 'e3', 'text 3']]);
      await store.accept([{ id: 'e6', kind: 'wake', text: 'after', source: 'hook:wake', at: new Date().toISOString(), unsafe: true }], []);
      expect((await store.listEvents(3, 10)).map((e) => [e.seq, e.id])).to.deep.equal([[6, 'e6']]);
    } finally {
      await store.close();
    }
    const db = new Database(join(dir, 'hookrelay.db'), { readonly: true });
    try {
      // Only the request log's (schema v14) are left: none reads an event by id.
      const indexes = db.pragma('index_list(events)') as { name: string }[];
      expect(indexes.map((i) => i.name).sort()).to.deep.equal(['events_req', 'events_req_route']);
      expect(indexes.flatMap((i) => (db.pragma(`index_info(${i.name})`) as { name: string }[]).map((c) => c.name))).to.not.include('id');
    } finally {
      db.close();
    }
  });
});
