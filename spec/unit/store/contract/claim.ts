import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';
import type { NewRun, RunRecord } from '../../../../src/store/records.js';

const run = (runId: string, sessionKey: string): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z',
});
const ids = (runs: RunRecord[]) => runs.map((r) => r.runId);
const done = { status: 'succeeded', endedAt: '2025-01-01T00:01:00.000Z' } as const;

/** claiming runs */
export function claimContract(h: Harness): void {
  describe('claiming runs', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });

    it('claims the oldest queued run of each session, oldest first, up to the limit', async () => {
      await store.accept([], [run('a1', 'A'), run('b1', 'B'), run('a2', 'A'), run('c1', 'C')]);
      const first = await store.claimRuns(2, 't1');
      expect(ids(first)).to.deep.equal(['a1', 'b1']);
      for (const r of first) expect(r).to.include({ status: 'running', startedAt: 't1' });
      expect(ids(await store.claimRuns(10, 't2'))).to.deep.equal(['c1']); // A and B are busy
      expect(await store.claimRuns(10, 't3')).to.deep.equal([]);
      await store.finishRun('a1', done, {});
      expect(ids(await store.claimRuns(10, 't4'))).to.deep.equal(['a2']);
      expect(await store.claimRuns(0, 't5')).to.deep.equal([]);
    });

    it('never returns two runs of one session, and skips a session that has a running run', async () => {
      await store.accept([], [run('x1', 'X')]);
      await store.claimRuns(1, 't');
      await store.accept([], [run('x2', 'X'), run('x3', 'X'), run('y1', 'Y'), run('y2', 'Y')]);
      const claimed = await store.claimRuns(10, 't');
      expect(ids(claimed)).to.deep.equal(['y1']);
      await store.requeueRuns(['x1']); // X is free again: its oldest queued run is x1 itself
      expect(ids(await store.claimRuns(10, 't'))).to.deep.equal(['x1']);
    });

    it('finds heads past a long queue of a busy session, oldest first', async () => {
      // 300 queued behind A's running run: more than the in-order window looks at.
      await store.accept([], [run('a0', 'A'), ...Array.from({ length: 300 }, (_, i) => run(`a${i + 1}`, 'A')), run('c1', 'C'), run('b1', 'B'), run('c2', 'C')]);
      expect(ids(await store.claimRuns(1, 't1'))).to.deep.equal(['a0']);
      expect(ids(await store.claimRuns(5, 't2'))).to.deep.equal(['c1', 'b1']);
      expect(await store.claimRuns(5, 't3')).to.deep.equal([]);
      await store.finishRun('a0', done, {});
      await store.finishRun('c1', done, {});
      expect(ids(await store.claimRuns(5, 't4'))).to.deep.equal(['a1', 'c2']);
    });

    it('gives a run to only one of two concurrent claims (same store: same batch)', async () => {
      await store.accept([], [run('r1', 'S')]);
      const [a, b] = await Promise.all([store.claimRuns(5, 'a'), store.claimRuns(5, 'b')]);
      expect([...ids(a), ...ids(b)]).to.deep.equal(['r1']);
    });

    it('gives each run to one claimer across two stores (two writers) on the same data', async () => {
      // A second store on the same data, as another process would be (SQLite: without the
      // data-directory lock, which forbids exactly that in the product; PostgreSQL: another instance).
      const other = await h.openOther();
      try {
        const sessions = 30;
        const perSession = 3;
        const runs: NewRun[] = [];
        for (let n = 0; n < perSession; n++) for (let s = 0; s < sessions; s++) runs.push(run(`s${s}-n${n}`, `S${s}`));
        await store.accept([], runs);

        const claimedBy = new Map<string, number>();
        // Both first claims go out together and each worker waits for the other's before it
        // finishes anything: whichever commits first holds 7 of the 30 sessions, so the other
        // finds work too. Without this, SQLite's busy handler can sleep the second writer
        // through the whole run on a slow machine, and one claimer takes everything.
        const firstClaims = [1, 2].map(() => {
          let done!: () => void;
          return { seen: new Promise<void>((r) => (done = r)), done: () => done() };
        });
        const worker = async (s: TestStore, who: number) => {
          for (let round = 0; ; round++) {
            const got = await s.claimRuns(7, `w${who}`);
            if (round === 0) {
              firstClaims[who - 1].done();
              await firstClaims[2 - who].seen;
            }
            if (got.length === 0) {
              if ((await s.listRuns({ limit: 1, status: 'queued' })).length === 0) return;
              await new Promise((r) => setTimeout(r, 2));
              continue;
            }
            // One turn at a time per session: never two running runs of one session.
            const running = await s.listRuns({ limit: 1000, status: 'running' });
            const keys = running.map((r) => r.sessionKey);
            expect(new Set(keys).size, 'two running runs in one session').to.equal(keys.length);
            for (const r of got) {
              expect(claimedBy.has(r.runId), `${r.runId} claimed twice`).to.equal(false);
              claimedBy.set(r.runId, who);
            }
            // In-session order: a run's predecessors in its session have ended.
            for (const r of got) {
              const n = Number(r.runId.split('-n')[1]);
              for (let p = 0; p < n; p++) expect((await s.getRun(`${r.runId.split('-n')[0]}-n${p}`))!.status).to.equal('succeeded');
            }
            await Promise.all(got.map((r) => s.finishRun(r.runId, done, {})));
          }
        };
        await Promise.all([worker(store, 1), worker(other, 2)]);
        expect(claimedBy.size).to.equal(sessions * perSession);
        expect(new Set(claimedBy.values()).size, 'both claimers got work').to.equal(2);
      } finally {
        await other.close();
      }
    });
  });
}
