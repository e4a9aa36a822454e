import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../support/silent-logger.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import { PURGE_BATCH } from '../../../src/store/maintenance.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { DAY, event as ev, iso, queuedRun as run, sqliteAtVersion, T0 } from './fixtures.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

describe('store/sqlite: retention (store.retainDays)', function () {
  this.timeout(20000);
  let dir: string;
  let now: number;
  const stores: SqliteStore[] = [];
  const open = async (opts: { retainDays?: number; purgeEveryMs?: number } = {}) => {
    const s = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger, clock: () => new Date(now), ...opts });
    stores.push(s);
    return s;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-retention-'));
    now = T0;
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a v2 store: reply events allowed, errorCode stored, the events seq counter carried over', async () => {
    const dataDir = join(dir, 'v2');
    mkdirSync(dataDir);
    const db = sqliteAtVersion(join(dataDir, 'hookrelay.db'), 2);
    const insert = db.prepare("INSERT INTO events (id, kind, text, source, at, unsafe) VALUES (?, 'wake', 't', 'wake', ?, 0)");
    for (let i = 0; i < 5; i++) insert.run(`v2-${i}`, iso(T0));
    db.prepare("DELETE FROM events WHERE id IN ('v2-3', 'v2-4')").run(); // newest purged: the counter stays at 5
    db.prepare("INSERT INTO history (session_key, role, content) VALUES ('main', 'user', 'old turn')").run();
    db.close();

    const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir, durability: 'os', log: silentLogger });
    stores.push(store);
    expect((await store.pragmas()).userVersion).to.equal(SCHEMA_VERSION);
    await store.appendHistory('main', [{ role: 'assistant', content: 'hi' }], {}, [ev('r1', T0, { kind: 'reply', source: 'heartbeat', unsafe: true })]);
    const events = await store.listEvents(0, 10);
    expect(events.map((e) => [e.id, e.seq, e.kind])).to.deep.equal([['v2-0', 1, 'wake'], ['v2-1', 2, 'wake'], ['v2-2', 3, 'wake'], ['r1', 6, 'reply']]);
    expect(await store.history('main', 10)).to.deep.equal([{ role: 'user', content: 'old turn' }, { role: 'assistant', content: 'hi' }]);
    await store.accept([], [run('r', T0)]);
    await store.claimRuns(1, iso(T0));
    await store.finishRun('r', { status: 'failed', endedAt: iso(T0), error: 'could not reach the model server at h:1', errorCode: 'model_unreachable' }, {});
    expect(await store.getRun('r')).to.include({ errorCode: 'model_unreachable', error: 'could not reach the model server at h:1' });
  });

  it('migrates a v7 store: its request rows stay, without a sender; new rows keep theirs', async () => {
    const dataDir = join(dir, 'v7');
    mkdirSync(dataDir);
    const db = sqliteAtVersion(join(dataDir, 'hookrelay.db'), 7);
    db.prepare("INSERT INTO requests (at, method, path, route, status, ms, replayed) VALUES (?, 'POST', '/hooks/wake', 'wake', 200, 1, 0)").run(iso(T0));
    db.close();

    const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir, durability: 'os', log: silentLogger });
    stores.push(store);
    expect((await store.pragmas()).userVersion).to.equal(SCHEMA_VERSION);
    await store.logRequests([{ at: iso(T0), method: 'POST', path: '/hooks/gh', route: 'mapping:gh', status: 200, ms: 1, eventIds: [], runIds: [], replayed: false, sender: 'github-bot' }]);
    const rows = await store.listRequests({ limit: 10 });
    expect(rows.map((r) => [r.route, r.sender])).to.deep.equal([['mapping:gh', 'github-bot'], ['wake', undefined]]);
  });
});
