import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { silentLogger } from '../../support/silent-logger.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { MIGRATIONS } from '../../../src/store/sqlite-schema.js';
import { runValues, RUN_COLUMNS } from '../../../src/store/rows.js';
import type { NewRun, RunRecord } from '../../../src/store/records.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const run = (runId: string, sessionKey: string): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z',
});
const ids = (runs: RunRecord[]) => runs.map((r) => r.runId);
const done = { status: 'succeeded', endedAt: '2025-01-01T00:01:00.000Z' } as const;

describe('store/sqlite: claiming runs', () => {
  let dir: string;
  let store: SqliteStore;
  const open = () => SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-claim-'));
    store = await open();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the claimable heads true through a random mix of accepts, claims, finishes and requeues', async () => {
    // The `ready` table (kept by triggers) against the heads recomputed from `runs`.
    const check = () => {
      const db = new Database(join(dir, 'hookrelay.db'), { readonly: true });
      const rows = (sql: string) => db.prepare(sql).all();
      try {
        expect(rows('SELECT session_key, seq FROM ready ORDER BY seq')).to.deep.equal(rows(`
          SELECT session_key, MIN(seq) AS seq FROM runs AS q WHERE status = 'queued'
            AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.status = 'running' AND r.session_key = q.session_key)
          GROUP BY session_key ORDER BY seq`));
      } finally {
        db.close();
      }
    };
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const running: string[] = [];
    let n = 0;
    for (let step = 0; step < 200; step++) {
      const what = rand(4);
      if (what === 0) {
        await store.accept([], Array.from({ length: 1 + rand(3) }, () => run(`r${n++}`, `S${rand(5)}`)));
      } else if (what === 1) {
        running.push(...ids(await store.claimRuns(1 + rand(3), 't')));
      } else if (what === 2 && running.length > 0) {
        await store.finishRun(running.splice(rand(running.length), 1)[0]!, done, {});
      } else if (what === 3 && running.length > 0) {
        await store.requeueRuns(running.splice(rand(running.length), 1));
      }
      check();
    }
    expect(n, 'the mix accepted runs').to.be.greaterThan(50);
  });

  it('builds the claimable heads when it migrates a v1 database that has queued and running runs', async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-claim-'));
    const v1 = new Database(join(dir, 'hookrelay.db'));
    v1.exec(MIGRATIONS[0]!);
    v1.pragma('user_version = 1');
    // Only the columns a v1 database has (later migrations add more).
    const v1Columns = new Set((v1.prepare('PRAGMA table_info(runs)').all() as { name: string }[]).map((c) => c.name));
    const columns = RUN_COLUMNS.split(', ');
    const kept = columns.map((c) => v1Columns.has(c));
    const insert = v1.prepare(`INSERT INTO runs (status, ${columns.filter((_, i) => kept[i]).join(', ')}) VALUES (?${', ?'.repeat(kept.filter(Boolean).length)})`);
    for (const [status, id, session] of [['running', 'a1', 'A'], ['queued', 'a2', 'A'], ['queued', 'b1', 'B'], ['queued', 'b2', 'B'], ['succeeded', 'c0', 'C'], ['queued', 'c1', 'C']]) {
      insert.run(status, ...runValues(run(id!, session!)).filter((_, i) => kept[i]));
    }
    v1.close();
    store = await open();
    expect(ids(await store.claimRuns(10, 't1'))).to.deep.equal(['b1', 'c1']);
    await store.finishRun('a1', done, {});
    expect(ids(await store.claimRuns(10, 't2'))).to.deep.equal(['a2']);
  });

});
