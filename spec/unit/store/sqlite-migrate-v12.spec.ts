import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../support/silent-logger.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';
import { sqliteAtVersion } from './fixtures.js';

/** SQLite v12: the /metrics gauges become kept counts (sql/tallies.ts), seeded from the rows a store already has. */
describe('store/sqlite: the v12 migration', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('seeds the kept counts from the runs and held wakes already stored, and keeps them from there', async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-v12-'));
    const v11 = sqliteAtVersion(join(dir, 'hookrelay.db'), 11);
    const run = v11.prepare(`INSERT INTO runs (run_id, session_key, status, message, wake_mode, deliver, provider, source, unsafe, created_at)
      VALUES (?, ?, ?, 'm', 'now', 0, 'last', ?, 0, '2026-01-01T00:00:00.000Z')`);
    run.run('r1', 's1', 'succeeded', 'agent');
    run.run('r2', 's2', 'succeeded', 'agent');
    run.run('r3', 's3', 'queued', 'mapping:p');
    run.run('r4', 's4', 'failed', 'mapping:p');
    v11.prepare("INSERT INTO paused (mapping, at) VALUES ('p', '2026-01-01T00:00:00.000Z')").run();
    v11.prepare("INSERT INTO held_events (id, kind, text, source, at, unsafe) VALUES ('h1', 'wake', 't', 'mapping:p', '2026-01-01T00:00:00.000Z', 0)").run();
    v11.close();

    const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });
    try {
      expect(await store.countRuns()).to.deep.equal({ queued: 1, running: 0, succeeded: 2, failed: 1, timed_out: 0 });
      expect(await store.countHeld()).to.deep.equal({ 'mapping:p': 2 });
      expect(await store.claimRuns(5, '2026-01-01T00:00:01.000Z')).to.have.length(1);
      expect(await store.countRuns()).to.deep.equal({ queued: 0, running: 1, succeeded: 2, failed: 1, timed_out: 0 });
      expect(await store.countHeld()).to.deep.equal({ 'mapping:p': 1 });
    } finally {
      await store.close();
    }
  });
});
