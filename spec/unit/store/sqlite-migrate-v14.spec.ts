import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { silentLogger } from '../../support/silent-logger.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';
import { sqliteAtVersion } from './fixtures.js';

/** SQLite v14: accepted requests' rows kept on their event or run; the rows a store already has stay where they are. */
describe('store/sqlite: the v14 migration', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the request log already stored, and numbers the rows after it past its last seq', async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-v14-'));
    const v13 = sqliteAtVersion(join(dir, 'hookrelay.db'), 13);
    const logged = v13.prepare(`INSERT INTO requests (seq, at, request_id, method, path, route, status, ms, event_ids, replayed)
      VALUES (?, '2026-01-01T00:00:00.000Z', ?, 'POST', '/hooks/wake', 'wake', 200, 1.5, ?, 0)`);
    logged.run(1, 'old-1', 'e-old-1');
    logged.run(7, 'old-7', 'e-old-7');
    v13.close();

    const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });
    try {
      const at = '2026-01-02T00:00:00.000Z';
      await store.accept([{ id: 'e-new', kind: 'wake', text: 't', source: 'wake', at, unsafe: false }], [], undefined, undefined,
        { at, requestId: 'new', method: 'POST', path: '/hooks/wake', route: 'wake', status: 200, ms: 2, eventIds: ['e-new'], runIds: [], replayed: false });
      const listed = await store.listRequests({ limit: 10 });
      expect(listed.map((r) => [r.seq, r.requestId])).to.deep.equal([[8, 'new'], [7, 'old-7'], [1, 'old-1']]);
      expect(await store.getRequest(7)).to.include({ requestId: 'old-7', ms: 1.5 });
    } finally {
      await store.close();
    }
    const db = new Database(join(dir, 'hookrelay.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM requests').get()).to.deep.equal({ n: 2 });
      expect(db.prepare("SELECT req_seq FROM events WHERE id = 'e-new'").get()).to.deep.equal({ req_seq: 8 });
    } finally {
      db.close();
    }
  });
});
