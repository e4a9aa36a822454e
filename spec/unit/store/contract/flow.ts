import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';
import type { NewEvent, NewRun, RunRecord } from '../../../../src/store/records.js';

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

  describe('the per-mapping rate window (ratePerMinute)', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });

    it('allows `limit` in a sliding 60 s, then answers how long until one is allowed; refusals do not count; another key is its own', async () => {
      expect(await store.takeRate('mapping:a', 2)).to.equal(0);
      expect(await store.takeRate('mapping:a', 2)).to.equal(0);
      const wait = await store.takeRate('mapping:a', 2);
      expect(wait).to.be.above(55_000).and.at.most(60_000);
      // The refusal took nothing: the wait is still counted from the first of the two.
      expect(await store.takeRate('mapping:a', 2)).to.be.at.most(wait);
      expect(await store.takeRate('mapping:b', 2)).to.equal(0);
      // A higher limit (a reload raised it) admits at once.
      expect(await store.takeRate('mapping:a', 3)).to.equal(0);
    });

    it('returnRate gives back the newest place: one more is admitted, and only one', async () => {
      expect(await store.takeRate('mapping:a', 2)).to.equal(0);
      expect(await store.takeRate('mapping:a', 2)).to.equal(0);
      expect(await store.takeRate('mapping:a', 2)).to.be.above(0);
      await store.returnRate('mapping:a');
      await store.returnRate('mapping:b'); // nothing taken: nothing to give back, and no error
      expect(await store.takeRate('mapping:a', 2)).to.equal(0);
      expect(await store.takeRate('mapping:a', 2)).to.be.above(0);
      // Two returns at once give back two places.
      await Promise.all([store.returnRate('mapping:a'), store.returnRate('mapping:a')]);
      expect(await store.takeRate('mapping:a', 2)).to.equal(0);
      expect(await store.takeRate('mapping:a', 2)).to.equal(0);
      expect(await store.takeRate('mapping:a', 2)).to.be.above(0);
    });

    it('admits exactly `limit` of many concurrent takes' + (h.name === 'postgres' ? ', across two instances' : ''), async () => {
      const stores = h.name === 'postgres' ? [store, await h.openOther()] : [store];
      try {
        const got = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % stores.length]!.takeRate('mapping:shared', 5)));
        expect(got.filter((w) => w === 0)).to.have.length(5);
      } finally {
        if (stores[1]) await stores[1].close();
      }
    });
  });

  describe('paused mappings and the wakes they hold', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });
    const wake = (id: string, source: string, held = false): NewEvent => ({
      id, kind: 'wake', text: `text ${id}`, source, at: '2025-01-01T00:00:00.000Z', unsafe: false, ...(held ? { held: true } : {}),
    });
    const eventIds = async (s: TestStore) => (await s.listEvents(0, 100)).map((e) => e.id);

    it('a held wake is no event until released; released, the wakes get their seq in order, after those accepted meanwhile', async () => {
      await store.pauseMapping('p', true);
      await store.pauseMapping('p', true); // twice: still one
      expect(await store.flowState()).to.deep.equal({ paused: ['p'], held: [] });
      await store.accept([wake('e1', 'mapping:p', true), wake('e2', 'mapping:q')], []);
      await store.accept([wake('e3', 'mapping:p', true)], [run('r1', 'R1', 'mapping:p'), run('r2', 'R2', 'mapping:p'), run('x1', 'X1', 'mapping:q')]);
      expect(await eventIds(store)).to.deep.equal(['e2']);
      expect(await store.flowState()).to.deep.equal({ paused: ['p'], held: ['mapping:p'] });
      expect(await store.countHeld()).to.deep.equal({ 'mapping:p': 4 });
      await store.pauseMapping('p', false);
      expect(await store.flowState()).to.deep.equal({ paused: [], held: ['mapping:p'] });
      expect(await store.releaseWakes('mapping:p')).to.equal(2);
      expect(await store.releaseWakes('mapping:p')).to.equal(0);
      const events = await store.listEvents(0, 100);
      expect(events.map((e) => e.id)).to.deep.equal(['e2', 'e1', 'e3']);
      expect(events[1]).to.include({ kind: 'wake', text: 'text e1', source: 'mapping:p', at: '2025-01-01T00:00:00.000Z' });
      expect(await store.flowState()).to.deep.equal({ paused: [], held: [] });
      expect(await store.countHeld()).to.deep.equal({});
    });

    it('a pause is stored: a reopened store and another one on the same data see it', async () => {
      await store.pauseMapping('a', true);
      await store.pauseMapping('b', true);
      await store.pauseMapping('b', false);
      const other = await h.openOther();
      try {
        expect((await other.flowState()).paused).to.deep.equal(['a']);
      } finally {
        await other.close();
      }
    });

    it('two stores releasing the same wakes at once move each once', async () => {
      const other = await h.openOther();
      try {
        await store.accept(Array.from({ length: 20 }, (_, i) => wake(`h${i}`, 'mapping:p', true)), []);
        const moved = await Promise.all([store.releaseWakes('mapping:p'), other.releaseWakes('mapping:p')]);
        expect(moved[0] + moved[1]).to.equal(20);
        expect(await eventIds(store)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `h${i}`));
      } finally {
        await other.close();
      }
    });
  });
}
