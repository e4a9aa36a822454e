import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';
import type { NewEvent, NewRun } from '../../../../src/store/records.js';

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

/** group commit */
export function commitContract(h: Harness): void {
  describe('group commit', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });

    it('commits 500 concurrent accepts in far fewer transactions, each visible once it resolves', async () => {
      const before = store.stats();
      const seenAfterAck: boolean[] = [];
      await Promise.all(
        Array.from({ length: 500 }, (_, i) =>
          store.accept([ev(`e${i}`)], [run(`r${i}`)]).then(async () => {
            seenAfterAck.push((await store.getRun(`r${i}`)) !== undefined);
          }),
        ),
      );
      const after = store.stats();
      expect(after.ops - before.ops).to.equal(500);
      expect(after.commits - before.commits).to.be.at.most(5);
      expect(seenAfterAck).to.have.length(500);
      expect(seenAfterAck.every(Boolean)).to.equal(true);
      expect(await store.listEvents(0, 1000)).to.have.length(500);
    });

    it('gathers ops that arrive while a batch is in flight into the next batch', async () => {
      const before = store.stats();
      const calls: Promise<unknown>[] = [];
      // 400 accepts spread over 40 turns of the event loop.
      for (let wave = 0; wave < 40; wave++) {
        for (let i = 0; i < 10; i++) calls.push(store.accept([ev(`w${wave}-${i}`)], []));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(calls);
      const commits = store.stats().commits - before.commits;
      expect(commits).to.be.at.least(1).and.below(40);
    });

    it('caps a batch at batchMax ops', async () => {
      await store.close();
      store = await open({ batchMax: 50 });
      await Promise.all(Array.from({ length: 200 }, (_, i) => store.accept([ev(`e${i}`)], [])));
      const s = store.stats();
      expect(s.largestBatch).to.equal(50);
      expect(s.commits).to.be.at.least(4);
    });

    it('rejects only the op that breaks a constraint; its batch-mates commit', async () => {
      await store.accept([ev('taken')], []);
      const before = store.stats().commits;
      const results = await outcomes([
        store.accept([ev('a1')], [run('ra')]),
        store.accept([ev('b1'), ev('b2', { kind: 'bogus' as 'wake' })], [run('rb')]), // one event breaks a CHECK: the whole op fails
        store.accept([], [run('ra')]), // duplicate run id (with the op before it in the same batch)
        store.accept([ev('c1', { kind: 'bogus' as 'wake' })], []), // CHECK constraint
        store.accept([ev('d1')], [run('rd')]),
      ]);
      expect(store.stats().commits - before).to.equal(1);
      expect(results.map((e) => e?.code)).to.deep.equal([undefined, 'constraint', 'constraint', 'constraint', undefined]);
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['taken', 'a1', 'd1']);
      expect(await store.getRun('rb')).to.equal(undefined);
      expect((await store.listRuns({ limit: 10 })).map((r) => r.runId)).to.deep.equal(['rd', 'ra']);
    });
  });
}
