import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';
import type { NewRun, RunRecord } from '../../../../src/store/records.js';

const run = (runId: string, sessionKey: string, source: string): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source, unsafe: false, createdAt: '2025-01-01T00:00:00.000Z',
});
const ids = (runs: RunRecord[]) => runs.map((r) => r.runId);
const done = { status: 'succeeded', endedAt: '2025-01-01T00:01:00.000Z' } as const;

/** Flow control in the claim (CONTRACT.md §14): per-mapping concurrency and held (paused) mappings. */
export function flowContract(h: Harness): void {
  describe('claiming runs under flow rules', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });

    it('claims at most `limit` running runs of a limited source, the others as usual', async () => {
      await store.accept([], [run('a1', 'A1', 'mapping:a'), run('a2', 'A2', 'mapping:a'), run('b1', 'B1', 'mapping:b'), run('a3', 'A3', 'mapping:a'), run('c1', 'C1', 'agent')]);
      const rules = { limits: { 'mapping:a': 1 } };
      expect(ids(await store.claimRuns(10, 't1', rules))).to.deep.equal(['a1', 'b1', 'c1']);
      expect(await store.claimRuns(10, 't2', rules)).to.deep.equal([]);
      await store.finishRun('a1', done, {});
      expect(ids(await store.claimRuns(10, 't3', rules))).to.deep.equal(['a2']);
      expect((await store.getRun('a3'))!.status).to.equal('queued');
    });

    it('a limit of 2 takes two at once, and the waiting runs leave room for others within `limit`', async () => {
      await store.accept([], [run('a1', 'A1', 'mapping:a'), run('a2', 'A2', 'mapping:a'), run('a3', 'A3', 'mapping:a'), run('b1', 'B1', 'mapping:b')]);
      // a3 waits for mapping a without taking one of the two slots: b1 gets it.
      expect(ids(await store.claimRuns(3, 't1', { limits: { 'mapping:a': 2 } }))).to.deep.equal(['a1', 'a2', 'b1']);
    });

    it('holds the runs of held sources, and claims them in order once they are no longer held', async () => {
      await store.accept([], [run('p1', 'P1', 'mapping:p'), run('q1', 'Q1', 'mapping:q'), run('p2', 'P2', 'mapping:p')]);
      expect(ids(await store.claimRuns(10, 't1', { held: ['mapping:p'] }))).to.deep.equal(['q1']);
      expect((await store.getRun('p1'))!.status).to.equal('queued');
      expect(ids(await store.claimRuns(10, 't2'))).to.deep.equal(['p1', 'p2']);
    });

    it('holds the limit across two stores on the same data (another instance)', async () => {
      const other = await h.openOther();
      try {
        await store.accept([], Array.from({ length: 12 }, (_, i) => run(`r${i}`, `S${i}`, 'mapping:one')));
        const rules = { limits: { 'mapping:one': 1 } };
        let claimed = 0;
        for (let round = 0; claimed < 12; round++) {
          expect(round, 'rounds').to.be.below(40);
          const got = (await Promise.all([store, other, store, other, store, other].map((s, i) => s.claimRuns(5, `c${i}`, rules)))).flat();
          const running = await store.listRuns({ status: 'running', limit: 100 });
          expect(running.length, 'running at once').to.be.at.most(1);
          for (const r of got) await store.finishRun(r.runId, done, {});
          claimed += got.length;
        }
      } finally {
        await other.close();
      }
    });
  });
}
