import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/log.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import { PURGE_BATCH, SqliteStore } from '../../../src/store/sqlite.js';
import type { NewEvent, NewRun } from '../../../src/store/store.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const ev = (id: string, at: number, extra: Partial<NewEvent> = {}): NewEvent => ({
  id, kind: 'wake', text: `text ${id}`, source: 'wake', at: iso(at), unsafe: false, ...extra,
});
const run = (runId: string, at: number, sessionKey = `hook:${runId}`): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: iso(at),
});

describe('store/sqlite: retention (store.retainDays)', function () {
  this.timeout(20000);
  let dir: string;
  let now: number;
  const stores: SqliteStore[] = [];
  const open = async (opts: { retainDays?: number; purgeEveryMs?: number } = {}) => {
    const s = await SqliteStore.open({ dataDir: dir, durability: 'os', log: silentLogger, clock: () => new Date(now), ...opts });
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

  /** Old data at T0: two ended runs with their turns, one still queued, one still running. */
  async function seedOld(store: SqliteStore) {
    await store.accept([ev('old-1', T0), ev('old-2', T0)], [run('done', T0), run('broke', T0), run('busy', T0), run('waits', T0, 'hook:busy')]);
    const claimed = await store.claimRuns(3, iso(T0));
    expect(claimed.map((r) => r.runId)).to.deep.equal(['done', 'broke', 'busy']);
    const turn = [{ role: 'user' as const, content: 'q' }, { role: 'assistant' as const, content: 'a' }];
    await store.finishRun('done', { status: 'succeeded', endedAt: iso(T0), reply: 'a' }, { history: turn });
    await store.finishRun('broke', { status: 'failed', endedAt: iso(T0), error: 'x', errorCode: 'model_http' }, {});
    await store.appendHistory('main', turn, { 'heartbeat.cursor': '2' });
  }

  it('purges ended runs, turns and events older than retainDays; keeps new ones and queued/running runs; seq goes on', async () => {
    const store = await open({ retainDays: 30 });
    await seedOld(store);
    now = T0 + 31 * DAY;
    await store.accept([ev('new-1', now)], [run('fresh', now)]);
    await store.appendHistory('main', [{ role: 'user', content: 'new q' }]);
    const lastOldSeq = (await store.listEvents(0, 10)).find((e) => e.id === 'new-1')!.seq;

    const counts = await store.purgeExpired();
    expect(counts).to.deep.equal({ runs: 2, history: 4, events: 2, outbox: 0 });
    expect((await store.listEvents(0, 100)).map((e) => e.id)).to.deep.equal(['new-1']);
    expect((await store.listRuns({ limit: 100 })).map((r) => r.runId).sort()).to.deep.equal(['busy', 'fresh', 'waits']);
    expect(await store.history('main', 10)).to.deep.equal([{ role: 'user', content: 'new q' }]);
    expect(await store.history('hook:done', 10)).to.deep.equal([]);
    // The queued run behind the running one is still its session's next: claims still work.
    await store.finishRun('busy', { status: 'succeeded', endedAt: iso(now), reply: 'ok' }, {});
    expect((await store.claimRuns(10, iso(now))).map((r) => r.runId)).to.deep.equal(['waits', 'fresh']);
    // seq is never reused, even once every older event is gone.
    await store.accept([ev('new-2', now)], []);
    expect((await store.listEvents(lastOldSeq, 10))[0]).to.include({ id: 'new-2', seq: lastOldSeq + 1 });
    // A second pass finds nothing more.
    expect(await store.purgeExpired()).to.deep.equal({ runs: 0, history: 0, events: 0, outbox: 0 });
  });

  it('a run that ended recently stays, however long ago it was accepted; 0 keeps everything', async () => {
    let store = await open({ retainDays: 30 });
    await store.accept([], [run('long', T0)]);
    await store.claimRuns(1, iso(T0));
    now = T0 + 40 * DAY;
    await store.finishRun('long', { status: 'succeeded', endedAt: iso(now - DAY), reply: 'late' }, {});
    await store.purgeExpired();
    expect(await store.getRun('long')).to.include({ status: 'succeeded' });

    await store.close();
    store = await open({ retainDays: 0 });
    await store.accept([ev('ancient', T0 - 1000 * DAY)], []);
    expect(await store.purgeExpired()).to.deep.equal({ runs: 0, history: 0, events: 0, outbox: 0 });
    expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['ancient']);
  });

  it(`works in batches of ${PURGE_BATCH} rows that take turns with other writes, and runs in the background on its own`, async () => {
    // No timer in the first part: on a slow machine it would purge the rows before the call does.
    let store = await open({ retainDays: 1, purgeEveryMs: 3_600_000 });
    now = T0 - 10 * DAY;
    const old = Array.from({ length: 1300 }, (_, i) => ev(`e${i}`, now));
    await store.accept(old, []);
    now = T0;
    const commitsBefore = store.stats().commits;
    // An accept sent while the purge runs commits before the purge is done (it is not held behind it).
    let purged = false;
    const purging = store.purgeExpired().then((c) => ((purged = true), c));
    await store.accept([ev('during', now)], []);
    expect(purged, 'the accept waited for the whole purge').to.equal(false);
    const counts = await purging;
    expect(counts.events).to.equal(1300);
    expect(store.stats().commits - commitsBefore, 'one commit per batch at least').to.be.at.least(Math.ceil(1300 / PURGE_BATCH));
    expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['during']);

    // The timer: rows that grow old later go without anyone asking.
    await store.close();
    store = await open({ retainDays: 1, purgeEveryMs: 50 });
    now = T0 + 2 * DAY;
    const deadline = Date.now() + 5000;
    while ((await store.listEvents(0, 10)).length > 0) {
      if (Date.now() > deadline) throw new Error('the background purge did not run');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  it('migrates a v2 store: reply events allowed, errorCode stored, the events seq counter carried over', async () => {
    const dataDir = join(dir, 'v2');
    mkdirSync(dataDir);
    const db = new Database(join(dataDir, 'hookrelay.db'));
    db.pragma('journal_mode = WAL');
    db.transaction(() => {
      for (let v = 0; v < 2; v++) db.exec(MIGRATIONS[v]!);
      db.pragma('user_version = 2');
    })();
    const insert = db.prepare("INSERT INTO events (id, kind, text, source, at, unsafe) VALUES (?, 'wake', 't', 'wake', ?, 0)");
    for (let i = 0; i < 5; i++) insert.run(`v2-${i}`, iso(T0));
    db.prepare("DELETE FROM events WHERE id IN ('v2-3', 'v2-4')").run(); // newest purged: the counter stays at 5
    db.prepare("INSERT INTO history (session_key, role, content) VALUES ('main', 'user', 'old turn')").run();
    db.close();

    const store = await SqliteStore.open({ dataDir, durability: 'os', log: silentLogger });
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
});
