import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { silentLogger } from '../../support/silent-logger.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import type { NewEvent, NewRun } from '../../../src/store/records.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const ev = (id: string, extra: Partial<NewEvent> = {}): NewEvent => ({
  id, kind: 'wake', text: `text ${id}`, source: 'wake', at: '2025-01-01T00:00:00.000Z', unsafe: false, ...extra,
});
const run = (runId: string, sessionKey = `hook:${runId}`): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z',
});

/** Settles every promise; returns the rejection (or undefined) of each. */
const outcomes = (ps: Promise<unknown>[]) =>
  Promise.all(ps.map((p) => p.then(() => undefined, (e: { code?: string }) => e)));

describe('store/sqlite: group commit', () => {
  let dir: string;
  let store: SqliteStore;
  const open = (batchMax?: number) => SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'fsync', log: silentLogger, batchMax });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-commit-'));
    store = await open();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts cross to the writer thread with every character kept (quotes, escapes, controls, U+2028, astral) and large integers', async () => {
    const texts = ['"quoted" \\ back\\slash \n\t\u0000', '\u007f\u009f\u202e', 'line\u2028sep\u2029', 'astral 😀 \u{10ffff}', ''];
    const sessions = ['k\u0001"', 'k😀'];
    await Promise.all([
      ...texts.map((text, i) => store.accept([ev(`t${i}`, { text })], [])),
      ...sessions.map((sessionKey, i) => store.accept([], [{ ...run(`r${i}`, sessionKey), timeoutSeconds: 2 ** 31 - 1 }])),
    ]);
    expect((await store.listEvents(0, 10)).map((e) => e.text)).to.deep.equal(texts);
    for (const [i, sessionKey] of sessions.entries()) {
      const stored = await store.getRun(`r${i}`);
      expect(stored?.sessionKey).to.equal(sessionKey);
      expect(stored?.timeoutSeconds).to.equal(2 ** 31 - 1);
    }
  });

  it('when the writer thread dies: pending writes reject, later writes reject, reads and close still work', async () => {
    await store.accept([ev('before')], []);
    const worker = (store as unknown as { worker: Worker }).worker;
    const pending = [store.accept([ev('p1')], []), store.accept([ev('p2')], [])];
    await worker.terminate();
    const results = await outcomes(pending);
    for (const e of results) expect(e?.code).to.equal('unavailable');
    const later = await outcomes([store.accept([ev('later')], []), store.claimRuns(1, 't')]);
    for (const e of later) {
      expect(e?.code).to.equal('unavailable');
      expect(String(e)).to.match(/writer thread stopped/);
    }
    expect(store.commitProblem(), 'what /healthz and the 503 answers say').to.equal('the store writer stopped; restart hookrelay');
    expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['before']);
    await store.close();
    store = await open();
    expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['before']);
  });
});
