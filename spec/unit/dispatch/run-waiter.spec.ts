import { expect } from 'chai';
import { createRunWaiter } from '../../../src/dispatch/run-waiter.js';
import type { RunRecord } from '../../../src/store/records.js';
import { postgresHarness, sqliteHarness, storesFor, type Harness } from '../store/contract/harness.js';
import { iso, queuedRun, T0 } from '../store/fixtures.js';

const ended = (r: RunRecord) => r.status !== 'queued' && r.status !== 'running';

/**
 * The wait of `?wait` / waitForCompletion (src/dispatch/run-waiter.ts) on a real store: a run
 * ended by this process wakes its waits at once; a run ended by another instance on the same
 * database (PostgreSQL: `openOther`) is noticed by the poll; a wait past its time, or ended at
 * shutdown, resolves undefined at once.
 */
function waiterSpec(h: Harness): void {
  describe(`dispatch/run-waiter on ${h.name}`, function () {
    this.timeout(30_000);
    before(() => h.setup());
    after(() => h.teardown());
    const open = storesFor(h);

    async function running(runId: string) {
      const store = await open();
      await store.accept([], [queuedRun(runId)]);
      await store.claimRuns(10, iso(T0));
      return store;
    }
    const finish = (store: Awaited<ReturnType<typeof running>>, runId: string) =>
      store.finishRun(runId, { status: 'succeeded', endedAt: iso(T0), reply: 'done' }, {});

    it('a run ended here wakes its wait at once (notify), long before the poll', async () => {
      const store = await running('r1');
      const waiter = createRunWaiter(store, 60_000);
      const started = Date.now();
      const waiting = waiter.wait('r1', 30_000, ended);
      await finish(store, 'r1');
      waiter.notify('r1');
      expect((await waiting)!.status).to.equal('succeeded');
      expect(Date.now() - started).to.be.below(2_000);
    });

    it('a run ended by another instance on the same data is noticed by the poll', async function () {
      if (h.name === 'sqlite') this.skip(); // one process holds a data directory: nobody else ends its runs
      const store = await running('r2');
      const other = await h.openOther();
      try {
        const waiter = createRunWaiter(store, 100);
        const waiting = waiter.wait('r2', 10_000, ended);
        await finish(other, 'r2');
        expect((await waiting)!.status).to.equal('succeeded');
      } finally {
        await other.close();
      }
    });

    it('a run that does not end in time: undefined after the wait, not before', async () => {
      const store = await running('r3');
      const started = Date.now();
      expect(await createRunWaiter(store, 50).wait('r3', 300, ended)).to.equal(undefined);
      expect(Date.now() - started).to.be.within(280, 2_000);
    });

    it('end() (shutdown) resolves every wait at once, and later waits without waiting', async () => {
      const store = await running('r4');
      const waiter = createRunWaiter(store, 60_000);
      const started = Date.now();
      const waits = [waiter.wait('r4', 30_000, ended), waiter.wait('r4', 30_000, ended)];
      setTimeout(() => waiter.end(), 100);
      expect(await Promise.all(waits)).to.deep.equal([undefined, undefined]);
      expect(await waiter.wait('r4', 30_000, ended)).to.equal(undefined);
      expect(Date.now() - started).to.be.below(2_000);
    });
  });
}

waiterSpec(sqliteHarness());
waiterSpec(postgresHarness('run-waiter'));
