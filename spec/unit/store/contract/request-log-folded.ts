import { expect } from 'chai';
import { storesAt, type Harness } from './harness.js';
import type { RequestRecord } from '../../../../src/store/records.js';
import { DAY, event as ev, iso, logRow as row, queuedRun as run, T0 } from '../fixtures.js';

const ids = (rows: RequestRecord[]) => rows.map((r) => r.requestId);

/**
 * The request log of accepted requests that made one event or one run (CONTRACT.md §11): their
 * row is kept on that event or run, and reads the same as any other in every listing and lookup.
 */
export function requestLogFoldedContract(h: Harness): void {
  describe('request log: rows kept with their event or run', function () {
    this.timeout(30000);
    const { clock, open } = storesAt(h, T0);

    it('an accept of one event or one run keeps no requests row, and its row reads back field for field, listed and fetched', async () => {
      const store = await open();
      const wake = row({ requestId: 'w', at: iso(T0 - 3), ms: 2.7, eventIds: ['e1'], contentType: 'application/json', userAgent: 'curl/8' });
      const agent = row({
        requestId: 'a', method: 'PUT', path: '/hooks/agent', route: 'agent', status: 202, ms: 0, runIds: ['r1'], sender: 'ci',
      });
      const typed = row({ requestId: 't', path: '/hooks/github', route: 'mapping:github', ms: 12.3, eventIds: ['e2'], contentType: 'text/plain; charset=utf-8' });
      await store.accept([ev('e1')], [], undefined, undefined, wake);
      await store.accept([], [run('r1', T0 + 5)], undefined, undefined, agent);
      await store.accept([ev('e2', T0 + 9)], [], undefined, undefined, typed);
      expect(await h.count('requests'), 'no requests row').to.equal(0);
      const listed = await store.listRequests({ limit: 10 });
      expect(listed).to.deep.equal([typed, agent, wake].map((r, i) => ({ seq: listed[i]!.seq, ...r })));
      for (const r of listed) expect(await store.getRequest(r.seq)).to.deep.equal(r);
      expect(listed[0]!.seq).to.be.greaterThan(listed[1]!.seq);
      expect(listed[1]!.seq).to.be.greaterThan(listed[2]!.seq);
    });

    it('keeps its own row what only one holds: a body, several actions, a failure, an error, a time not in ISO form', async () => {
      const store = await open();
      await store.accept([ev('e1')], [], undefined, undefined, row({ requestId: 'body', eventIds: ['e1'], body: '{}', bodyUntil: iso(T0 + DAY) }));
      await store.accept([ev('e2'), ev('e3')], [], undefined, undefined, row({ requestId: 'two', eventIds: ['e2', 'e3'] }));
      await store.accept([ev('e4')], [run('r1')], undefined, undefined, row({ requestId: 'both', eventIds: ['e4'], runIds: ['r1'] }));
      await store.accept([ev('e5')], [], undefined, undefined, row({ requestId: 'failures', eventIds: ['e5'],
        failures: [{ mappingId: 'm', step: 'template', code: 'T1', message: 'x' }] }));
      await store.accept([ev('e6')], [], undefined, undefined, row({ requestId: 'other-id', eventIds: ['e-unknown'] }));
      // A time not in toISOString's form would not read back the same from a lag.
      await store.accept([ev('e7')], [], undefined, undefined, row({ requestId: 'time', at: '2030-01-01T00:00:00Z', eventIds: ['e7'] }));
      expect(await h.count('requests')).to.equal(6);
      const listed = await store.listRequests({ limit: 10 });
      expect(ids(listed)).to.deep.equal(['time', 'other-id', 'failures', 'both', 'two', 'body']);
      expect(listed[0]!.at).to.equal('2030-01-01T00:00:00Z');
    });

    it('one seq for every row: mixed pages in seq order, filtered and paged alike', async () => {
      const store = await open();
      const other = await h.openOther();
      try {
        const writes: Promise<unknown>[] = [];
        for (let i = 0; i < 12; i++) {
          const writer = i % 2 ? other : store;
          if (i % 3 === 0) writes.push(writer.logRequests([row({ requestId: `n${i}`, status: 401, route: 'wake', error: 'unauthorized' })]));
          else if (i % 3 === 1) writes.push(writer.accept([ev(`e${i}`)], [], undefined, undefined, row({ requestId: `n${i}`, eventIds: [`e${i}`] })));
          else writes.push(writer.accept([], [run(`r${i}`)], undefined, undefined, row({ requestId: `n${i}`, route: 'agent', status: 202, runIds: [`r${i}`] })));
        }
        await Promise.all(writes);
      } finally {
        await other.close();
      }
      expect(await h.count('requests')).to.equal(4);
      const all = await store.listRequests({ limit: 100 });
      expect(all).to.have.length(12);
      const seqs = all.map((r) => r.seq);
      expect(new Set(seqs).size, 'unique').to.equal(12);
      expect(seqs, 'newest first').to.deep.equal([...seqs].sort((a, b) => b - a));
      // Pages of 5 with before= give the listing back, rows of the three kinds on one page.
      const paged: RequestRecord[] = [];
      for (let before: number | undefined; paged.length < 12;) {
        const page = await store.listRequests({ limit: 5, ...(before === undefined ? {} : { before }) });
        paged.push(...page);
        before = page.at(-1)!.seq;
      }
      expect(paged).to.deep.equal(all);
      const of = (pred: (r: RequestRecord) => boolean) => ids(all.filter(pred));
      expect(ids(await store.listRequests({ limit: 100, route: 'wake' }))).to.deep.equal(of((r) => r.route === 'wake'));
      expect(ids(await store.listRequests({ limit: 100, statusClass: 2 }))).to.deep.equal(of((r) => r.status < 300));
      expect(ids(await store.listRequests({ limit: 100, statusClass: 4 }))).to.deep.equal(of((r) => r.status === 401));
      expect(ids(await store.listRequests({ limit: 100, route: 'wake', statusClass: 2 }))).to.deep.equal(of((r) => r.route === 'wake' && r.status < 300));
      expect(ids(await store.listRequests({ limit: 2, route: 'agent', before: all[0]!.seq }))).to.deep.equal(of((r) => r.route === 'agent' && r.seq < all[0]!.seq).slice(0, 2));
      expect(await store.listRequests({ limit: 100, replayOf: all[0]!.seq })).to.deep.equal([]);
      // A row logged after all of them comes first.
      await store.logRequests([row({ requestId: 'last', status: 404, route: 'unmatched' })]);
      expect((await store.listRequests({ limit: 1 }))[0]).to.include({ requestId: 'last' }).and.have.property('seq').greaterThan(all[0]!.seq);
    });

    it('goes with its event or run at store.retainDays', async () => {
      const store = await open({ retainDays: 30 });
      await store.accept([ev('old')], [], undefined, undefined, row({ requestId: 'old', eventIds: ['old'] }));
      await store.accept([ev('new', T0 + 20 * DAY)], [], undefined, undefined, row({ requestId: 'new', at: iso(T0 + 20 * DAY), eventIds: ['new'] }));
      clock.now = T0 + 31 * DAY;
      await store.purgeExpired();
      expect(ids(await store.listRequests({ limit: 10 }))).to.deep.equal(['new']);
    });
  });
}
