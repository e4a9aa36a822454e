import { expect } from 'chai';
import { storesAt, type Harness, type TestStore } from './harness.js';
import { PURGE_BATCH } from '../../../../src/store/maintenance.js';
import type { NewKey } from '../../../../src/store/records.js';
import { event as ev, iso, queuedRun as run, T0 } from '../fixtures.js';
import { until } from '../../../support/gateway.js';

const key = (k: string, at: number, guards: { events?: string[]; runs?: string[] } = {}, requestHash = 'h'): NewKey => ({
  key: k, requestHash, status: 200, body: `{"first":"${k}"}`, at: iso(at), eventIds: guards.events ?? [], runIds: guards.runs ?? [],
});

/** idempotency keys */
export function keysContract(h: Harness): void {
  describe('idempotency keys', function () {
    this.timeout(30000);
    const { clock, open } = storesAt(h, T0);

    it('a key held — by a commit before or by an op earlier in the same batch — skips only its own rows; the batch commits', async () => {
      const store = await open();
      expect(await store.accept([ev('e0')], [], [key('old', T0, { events: ['e0'] })])).to.deep.equal([]);
      // One turn of the event loop: these three share a commit.
      const [a, b, c] = await Promise.all([
        store.accept([ev('e1')], [run('r1')], [key('new', T0, { events: ['e1'], runs: ['r1'] })]),
        store.accept([ev('e2')], [run('r2')], [key('new', T0, { events: ['e2'], runs: ['r2'] })]),
        store.accept([ev('e3'), ev('e4')], [], [key('old', T0, { events: ['e3'] }), key('fresh', T0, { events: ['e4'] })]),
      ]);
      expect(store.stats().commits).to.equal(2);
      expect([a, b, c]).to.deep.equal([[], [0], [0]]);
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['e0', 'e1', 'e4']);
      expect(await store.getRun('r2')).to.equal(undefined);
      expect((await store.getRun('r1'))?.status).to.equal('queued');
      const [old, fresh, none] = await store.findKeys(['old', 'fresh', 'nope']);
      expect(old).to.deep.equal({ requestHash: 'h', status: 200, body: '{"first":"old"}', at: iso(T0) });
      expect(fresh?.body).to.equal('{"first":"fresh"}');
      expect(none).to.equal(undefined);
    });

    it('keys survive a restart; past the window they are no longer found, are taken over by a new use, and are purged in small batches', async () => {
      let store = await open({ idempotencyWindowSeconds: 60 });
      const many = Array.from({ length: PURGE_BATCH + 20 }, (_, i) => key(`k${i}`, T0));
      await store.accept([], [], many);
      await store.close();
      store = await open({ idempotencyWindowSeconds: 60 });
      expect((await store.findKeys(['k0']))[0]?.body).to.equal('{"first":"k0"}');

      clock.now = T0 + 61_000;
      expect(await store.findKeys(['k0', 'k1'])).to.deep.equal([undefined, undefined]);
      // An expired key not purged yet is taken over: its new rows commit.
      expect(await store.accept([ev('again')], [], [key('k0', clock.now, { events: ['again'] }, 'h2')])).to.deep.equal([]);
      expect((await store.findKeys(['k0']))[0]).to.include({ requestHash: 'h2', at: iso(clock.now) });

      expect(await store.purgeExpiredKeys()).to.equal(PURGE_BATCH + 19);
      expect((await h.count('idempotency'))).to.equal(1);
      expect((await store.findKeys(['k0']))[0]?.requestHash).to.equal('h2');
    });

    it('the purge runs by itself on its timer, off the request path', async () => {
      const store = await open({ idempotencyWindowSeconds: 1, keysPurgeEveryMs: 50 });
      await store.accept([], [], [key('a', T0), key('b', T0 + 5000)]);
      clock.now = T0 + 2000;
      await until('the background purge to leave one key', async () => (await h.count('idempotency')) === 1, 5000, 25);
      expect((await h.count('idempotency'))).to.equal(1);
      expect((await store.findKeys(['b']))[0]?.body).to.equal('{"first":"b"}');
    });
  });
}
