import { expect } from 'chai';
import { storesAt, type Harness } from './harness.js';
import { DAY, event as ev, expectCode, iso, logRow, queuedRun as run, T0 } from '../fixtures.js';

/**
 * An event's time (`at`) is kept as ms since the epoch and read back as an ISO time in
 * toISOString's form, which is how the gateway makes every one: the same string on every path
 * an event takes into the store, and retention cuts at the ms.
 */
export function eventTimesContract(h: Harness): void {
  describe('event times', function () {
    this.timeout(30000);
    const { clock, open } = storesAt(h, T0);

    it('reads each time back as given, to the ms, whichever way the event came in', async () => {
      const store = await open();
      const times = [0, -1, 1, T0, T0 + 999, Date.parse('2999-12-31T23:59:59.999Z'), ...Array.from({ length: 20 }, (_, i) => T0 + i * 7_777_777_777 + i)].map(iso);
      await store.accept(times.map((at, i) => ev(`e${i}`, Date.parse(at))), []);
      // A held wake, released; a run's summary; an event beside conversation turns.
      await store.pauseMapping('p', true);
      await store.accept([ev('held', T0 + 5, { source: 'mapping:p', held: true })], []);
      expect(await store.releaseWakes('mapping:p')).to.equal(1);
      await store.accept([], [run('r1')]);
      await store.claimRuns(1, iso(T0));
      await store.finishRun('r1', { status: 'succeeded', endedAt: iso(T0 + 9), reply: 'ok' }, { summary: ev('summary', T0 + 9, { kind: 'summary', source: 'run:r1' }) });
      await store.appendHistory('main', [{ role: 'assistant', content: 'hi' }], {}, [ev('reply', T0 + 11, { kind: 'reply', source: 'heartbeat' })]);
      const events = await store.listEvents(0, 100);
      expect(events.map((e) => [e.id, e.at])).to.deep.equal([
        ...times.map((at, i) => [`e${i}`, at]), ['held', iso(T0 + 5)], ['summary', iso(T0 + 9)], ['reply', iso(T0 + 11)],
      ]);
      // What weighs against a byte budget is the time as read: two of 200 bytes fit in 400, not three.
      const sized = (await store.listEvents(0, 100)).slice(0, 3);
      const weight = (e: (typeof sized)[number]) => e.text.length + e.source.length + e.id.length + e.kind.length + e.at.length;
      expect((await store.listEvents(0, 100, weight(sized[0]!) + weight(sized[1]!))).map((e) => e.id)).to.deep.equal(['e0', 'e1']);
    });

    it('an ISO time in another form is kept as its instant; a text that is no time is refused, and only its own accept fails', async () => {
      const store = await open();
      const [other, none, fine] = await Promise.allSettled([
        store.accept([{ ...ev('offset'), at: '2030-01-01T01:00:00+01:00' }], []),
        store.accept([{ ...ev('none'), at: 'soon' }], []),
        store.accept([ev('fine')], []),
      ]);
      expect([other.status, fine.status]).to.deep.equal(['fulfilled', 'fulfilled']);
      await expectCode(Promise.reject((none as PromiseRejectedResult).reason), 'constraint');
      await expectCode(store.accept([{ ...ev('held-none', T0, { source: 'mapping:p', held: true }), at: '' }], []), 'constraint');
      expect((await store.listEvents(0, 10)).map((e) => [e.id, e.at])).to.deep.equal([['offset', iso(T0)], ['fine', iso(T0)]]);
    });

    it('a folded request row keeps its own time beside its event', async () => {
      const store = await open();
      await store.accept([ev('e1', T0 + 1000)], [], undefined, undefined, logRow({ at: iso(T0 + 1), eventIds: ['e1'] }));
      expect(await h.count('requests')).to.equal(0);
      expect((await store.listRequests({ limit: 1 }))[0]).to.include({ at: iso(T0 + 1), requestId: 'req-1' });
      expect((await store.listEvents(0, 1))[0]).to.include({ at: iso(T0 + 1000) });
    });

    it('retention cuts at the ms: an event a ms older than store.retainDays goes, one at the cut-off stays', async () => {
      const store = await open({ retainDays: 30 });
      await store.accept([ev('older', T0 - 1), ev('at-cut', T0), ev('newer', T0 + 1)], []);
      clock.now = T0 + 30 * DAY;
      expect((await store.purgeExpired()).events).to.equal(1);
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['at-cut', 'newer']);
    });
  });
}
