import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../support/silent-logger.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';
import { sqliteAtVersion } from './fixtures.js';

/**
 * SQLite v9 rebuilds the outbox (run callbacks, docs/callbacks.md): a database written before
 * keeps its pending rows — claimable, with their runs' deliveries shown — and a run may then
 * have a callback row beside its reply row.
 */
describe('store/sqlite: the v9 outbox rebuild keeps what was there', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a pending reply of a v8 database is still claimable after the migration, and its run shows it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-v9-'));
    const v8 = sqliteAtVersion(join(dir, 'hookrelay.db'), 8);
    v8.prepare(`INSERT INTO runs (run_id, session_key, status, message, wake_mode, deliver, provider, recipient, source, unsafe, created_at, ended_at, reply)
      VALUES ('r1', 'hook:r1', 'succeeded', 'm', 'now', 1, 'telegram', '555', 'agent', 0, 't0', 't1', 'hi')`).run();
    v8.prepare(`INSERT INTO outbox (kind, run_id, target, payload, parts, status, next_at, created_at)
      VALUES ('run', 'r1', 'telegram:555', '{"provider":"telegram","to":"555","parts":["hi"]}', 1, 'pending', '2000-01-01T00:00:00.000Z', 't1')`).run();
    v8.close();

    const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });
    try {
      expect((await store.getRun('r1'))!.delivery).to.deep.equal({ status: 'pending', target: 'telegram:555', attempts: 0 });
      const { deliveries } = await store.claimDeliveries(new Date().toISOString(), 10, '2999-01-01T00:00:00.000Z');
      expect(deliveries).to.have.length(1);
      expect(deliveries[0]).to.include({ kind: 'run', runId: 'r1', target: 'telegram:555' });
    } finally {
      await store.close();
    }
  });
});
