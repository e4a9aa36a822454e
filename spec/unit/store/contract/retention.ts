import { expect } from 'chai';
import { storesAt, type Harness, type TestStore } from './harness.js';
import { PURGE_BATCH } from '../../../../src/store/maintenance.js';
import { DAY, event as ev, iso, queuedRun as run, T0 } from '../fixtures.js';
import { until } from '../../../support/gateway.js';

/** retention (store.retainDays) */
export function retentionContract(h: Harness): void {
  describe('retention (store.retainDays)', function () {
    this.timeout(30000);
    const { clock, open } = storesAt(h, T0);

    /** Old data at T0: two ended runs with their turns, one still queued, one still running. */
    async function seedOld(store: TestStore) {
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
      clock.now = T0 + 31 * DAY;
      await store.accept([ev('new-1', clock.now)], [run('fresh', clock.now)]);
      await store.appendHistory('main', [{ role: 'user', content: 'new q' }]);
      const lastOldSeq = (await store.listEvents(0, 10)).find((e) => e.id === 'new-1')!.seq;

      const counts = await store.purgeExpired();
      expect(counts).to.deep.equal({ runs: 2, history: 4, events: 2, outbox: 0 });
      expect((await store.listEvents(0, 100)).map((e) => e.id)).to.deep.equal(['new-1']);
      expect((await store.listRuns({ limit: 100 })).map((r) => r.runId).sort()).to.deep.equal(['busy', 'fresh', 'waits']);
      expect(await store.history('main', 10)).to.deep.equal([{ role: 'user', content: 'new q' }]);
      expect(await store.history('hook:done', 10)).to.deep.equal([]);
      // The queued run behind the running one is still its session's next: claims still work.
      await store.finishRun('busy', { status: 'succeeded', endedAt: iso(clock.now), reply: 'ok' }, {});
      expect((await store.claimRuns(10, iso(clock.now))).map((r) => r.runId)).to.deep.equal(['waits', 'fresh']);
      // seq is never reused, even once every older event is gone.
      await store.accept([ev('new-2', clock.now)], []);
      expect((await store.listEvents(lastOldSeq, 10))[0]).to.include({ id: 'new-2', seq: lastOldSeq + 1 });
      // A second pass finds nothing more.
      expect(await store.purgeExpired()).to.deep.equal({ runs: 0, history: 0, events: 0, outbox: 0 });
    });

    it('a run that ended recently stays, however long ago it was accepted; 0 keeps everything', async () => {
      let store = await open({ retainDays: 30 });
      await store.accept([], [run('long', T0)]);
      await store.claimRuns(1, iso(T0));
      clock.now = T0 + 40 * DAY;
      await store.finishRun('long', { status: 'succeeded', endedAt: iso(clock.now - DAY), reply: 'late' }, {});
      await store.purgeExpired();
      expect(await store.getRun('long')).to.include({ status: 'succeeded' });

      await store.close();
      store = await open({ retainDays: 0 });
      await store.accept([ev('ancient', T0 - 1000 * DAY)], []);
      expect(await store.purgeExpired()).to.deep.equal({ runs: 0, history: 0, events: 0, outbox: 0 });
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['ancient']);
    });

    it(`works in batches of ${PURGE_BATCH} rows that take turns with other writes, and runs in the background on its own`, async () => {
      // The timer's first pass only after a minute here: a pass of its own under way would be
      // joined by the explicit one below, with the counts of its earlier clock.
      let store = await open({ retainDays: 1 });
      clock.now = T0 - 10 * DAY;
      const old = Array.from({ length: 1300 }, (_, i) => ev(`e${i}`, clock.now));
      await store.accept(old, []);
      clock.now = T0;
      const commitsBefore = store.stats().commits;
      // An accept sent while the purge runs commits before the purge is done (it is not held behind it).
      let purged = false;
      const purging = store.purgeExpired().then((c) => ((purged = true), c));
      await store.accept([ev('during', clock.now)], []);
      // SQLite has one writer, where a purge could hold the queue; on PostgreSQL the accept and
      // each purge batch are transactions on their own connections, which can end in either
      // order on a busy machine (nothing waits for the other, so there is nothing to order).
      if (h.name === 'sqlite') expect(purged, 'the accept waited for the whole purge').to.equal(false);
      const counts = await purging;
      expect(counts.events).to.equal(1300);
      expect(store.stats().commits - commitsBefore, 'one commit per batch at least').to.be.at.least(Math.ceil(1300 / PURGE_BATCH));
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['during']);

      // The timer: rows that grow old later go without anyone asking.
      await store.close();
      store = await open({ retainDays: 1, purgeEveryMs: 50 });
      clock.now = T0 + 2 * DAY;
      await until('the background purge to remove the old events', async () => (await store.listEvents(0, 10)).length === 0, 5000);
    });
  });
}
