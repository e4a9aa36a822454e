import { expect } from 'chai';
import { storesAt, type Harness, type TestStore } from './harness.js';
import { RUN_STATUSES, type NewRun } from '../../../../src/store/records.js';
import { DAY, event, iso, T0 } from '../fixtures.js';

const run = (runId: string, source: string, at = T0): NewRun => ({
  runId, sessionKey: `hook:${runId}`, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source, unsafe: false, createdAt: iso(at),
});
const held = (id: string, mapping: string) => event(id, T0, { source: `mapping:${mapping}`, held: true });

/** The /metrics gauges' counts (hookrelay_runs, hookrelay_mapping_held), kept by the store rather than counted per scrape. */
export function countsContract(h: Harness): void {
  describe('kept counts (the /metrics gauges)', function () {
    this.timeout(30000);
    const { clock, open } = storesAt(h, T0);

    /** What a COUNT(*) behind the store's back finds, in the shape of countRuns and countHeld. */
    async function counted() {
      const runs = Object.fromEntries(await Promise.all(RUN_STATUSES.map(async (s) => [s, await h.count(`runs WHERE status = '${s}'`)])));
      const held: Record<string, number> = {};
      for (const source of ['mapping:p', 'mapping:q', 'agent']) {
        const n = await h.count(`held_events WHERE source = '${source}'`)
          + await h.count(`runs WHERE status = 'queued' AND source = '${source}' AND source IN (SELECT 'mapping:' || mapping FROM paused)`);
        if (n > 0) held[source] = n;
      }
      return { runs, held };
    }
    async function expectCounted(store: TestStore, runs: Partial<Record<string, number>>) {
      const real = await counted();
      expect(real.runs).to.include(runs); // the mix below did what it meant to
      expect({ runs: await store.countRuns(), held: await store.countHeld() }).to.deep.equal(real);
      return real;
    }

    it('equal a real count after accepts, claims, ends, requeues, pauses, releases, purges and a reopen', async () => {
      let store = await open({ retainDays: 30 });
      await store.accept([event('w1')], [run('a1', 'agent'), run('a2', 'agent'), run('p1', 'mapping:p'), run('p2', 'mapping:p'), run('q1', 'mapping:q')]);
      await store.pauseMapping('p', true);
      await store.accept([held('h1', 'p'), held('h2', 'p')], []);
      await expectCounted(store, { queued: 5 });
      expect(await store.countHeld()).to.deep.equal({ 'mapping:p': 4 });

      const claimed = await store.claimRuns(10, iso(T0), { held: ['mapping:p'] });
      expect(claimed.map((r) => r.runId)).to.deep.equal(['a1', 'a2', 'q1']);
      await store.finishRun('a1', { status: 'succeeded', endedAt: iso(T0), reply: 'ok' }, {});
      await store.finishRun('q1', { status: 'timed_out', endedAt: iso(T0), error: 'late' }, {});
      await store.requeueRuns(['a2']);
      await expectCounted(store, { queued: 3, running: 0, succeeded: 1, timed_out: 1 });

      await store.pauseMapping('p', false);
      expect(await store.releaseWakes('mapping:p')).to.equal(2);
      await store.claimRuns(10, iso(T0));
      await store.finishRun('p1', { status: 'failed', endedAt: iso(T0), error: 'x' }, {});
      await expectCounted(store, { queued: 0, running: 2, failed: 1 });
      expect(await store.countHeld()).to.deep.equal({});

      clock.now = T0 + 31 * DAY;
      await store.accept([], [run('fresh', 'agent', clock.now)]);
      expect((await store.purgeExpired()).runs).to.equal(3);
      await expectCounted(store, { queued: 1, running: 2, succeeded: 0, failed: 0, timed_out: 0 });

      await store.close();
      store = await open({ retainDays: 30 });
      await store.finishRun('p2', { status: 'succeeded', endedAt: iso(clock.now), reply: 'ok' }, {});
      await expectCounted(store, { queued: 1, running: 1, succeeded: 1 });
    });

    it('equal a real count when two stores on the same data change runs at once', async () => {
      const first = await open();
      const second = await h.openOther();
      try {
        const batch = (k: string) => Array.from({ length: 20 }, (_, i) => run(`${k}${i}`, i % 2 ? 'agent' : 'mapping:q'));
        await Promise.all([first.accept([], batch('x')), second.accept([], batch('y'))]);
        const [a, b] = await Promise.all([first.claimRuns(15, iso(T0)), second.claimRuns(15, iso(T0))]);
        expect(a.length + b.length).to.equal(30);
        await Promise.all([...a.map((r) => first.finishRun(r.runId, { status: 'succeeded', endedAt: iso(T0) }, {})),
          ...b.slice(0, 5).map((r) => second.finishRun(r.runId, { status: 'failed', endedAt: iso(T0), error: 'x' }, {}))]);
        const counts = { queued: 10, running: b.length - 5, succeeded: a.length, failed: 5 };
        await expectCounted(first, counts);
        // The upkeep folds what each connection added, without changing a count.
        await second.purgeExpired();
        await expectCounted(second, counts);
        await expectCounted(first, counts);
      } finally {
        await second.close();
      }
    });
  });
}
