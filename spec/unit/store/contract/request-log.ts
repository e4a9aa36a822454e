import { expect } from 'chai';
import { storesAt, type Harness } from './harness.js';
import { silentLogger } from '../../../support/silent-logger.js';
import { createRequestLog } from '../../../../src/store/request-log.js';
import type { NewKey } from '../../../../src/store/records.js';
import { DAY, event as ev, iso, logRow as row, queuedRun as run, T0 } from '../fixtures.js';

const key = (k: string, guards: { events?: string[]; runs?: string[] }): NewKey => ({
  key: k, requestHash: 'h', status: 200, body: '{"ok":true}', at: iso(T0), eventIds: guards.events ?? [], runIds: guards.runs ?? [],
});

/** The request log (CONTRACT.md §11): rows with the accept, batches of the others, retention of rows and bodies. */
export function requestLogContract(h: Harness): void {
  describe('request log', function () {
    this.timeout(30000);
    const { clock, open } = storesAt(h, T0);

    it('an accept commits its request row with it, every field round-tripped; listings leave the body and its kept headers and query out', async () => {
      const store = await open();
      const full = row({
        requestId: 'abc-1', path: '/hooks/github', route: 'mapping:github', status: 202, ms: 3.25, eventIds: ['e1'], runIds: ['r1', 'r2'],
        contentType: 'application/json', userAgent: 'GitHub-Hookshot/1', body: '{"a":"<b>x</b>"}', bodyUntil: iso(T0 + DAY),
        sender: 'github-bot', headers: { 'x-github-event': 'push', 'x-custom': 'a "quoted" <value>' }, query: 'ref=main&x=%20y',
        failures: [{ mappingId: 'github-issues', step: 'match.when', code: 'T2009', message: 'The values … and … either side of operator ">" must be of the same data type', position: 21 }],
      });
      await store.accept([ev('e1')], [run('r1'), run('r2')], undefined, undefined, full);
      const [listed] = await store.listRequests({ limit: 10 });
      const { body: _body, headers: _headers, query: _query, ...withoutBody } = full;
      expect(listed).to.deep.equal({ seq: listed!.seq, ...withoutBody });
      expect(await store.getRequest(listed!.seq)).to.deep.equal({ seq: listed!.seq, ...full });
      expect(await store.getRequest(listed!.seq + 1000)).to.equal(undefined);
    });

    it('a no_mapping row keeps why nothing matched, in the listing and the row', async () => {
      const store = await open();
      const explanation = { mappings: 2, verdicts: [{ mapping: 'push', failed: 'header' as const, header: 'x-github-event' }, { mapping: 'big', failed: 'when' as const, error: { code: 'D3030' } }] };
      await store.logRequests([row({ status: 404, error: 'no_mapping', route: 'unmatched', explanation })]);
      const [listed] = await store.listRequests({ limit: 10 });
      expect(listed!.explanation).to.deep.equal(explanation);
      expect((await store.getRequest(listed!.seq))!.explanation).to.deep.equal(explanation);
    });

    it('a failed accept logs nothing; an accept whose key was held leaves its row out (its caller logs the replay)', async () => {
      const store = await open();
      await store.accept([ev('dup')], [], undefined, undefined, row({ requestId: 'first' }));
      // An event the store refuses (a kind its CHECK does not take): the accept fails as a whole, its row with it.
      let failed: unknown;
      await store.accept([ev('bad', T0, { kind: 'bogus' as 'wake' })], [], undefined, undefined, row({ requestId: 'second' })).catch((e) => (failed = e));
      expect(failed, 'the duplicate accept rejects').to.be.instanceOf(Error);
      await store.accept([ev('k1')], [], [key('K', { events: ['k1'] })], undefined, row({ requestId: 'keyed' }));
      const held = await store.accept([ev('k2')], [], [key('K', { events: ['k2'] })], undefined, row({ requestId: 'repeat' }));
      expect(held).to.deep.equal([0]);
      expect((await store.listRequests({ limit: 10 })).map((r) => r.requestId)).to.deep.equal(['keyed', 'first']);
      expect(await h.count('requests')).to.equal(2);
    });

    it('logRequests commits rows in one call; listings are newest first, filtered by status class, route and replayOf, paged with before', async () => {
      const store = await open();
      await store.logRequests([
        row({ requestId: 'a', status: 401, route: 'wake', error: 'unauthorized' }),
        row({ requestId: 'b', status: 200, route: 'mapping:x' }),
        row({ requestId: 'c', status: 400, route: 'mapping:x', error: 'invalid_signature' }),
        row({ requestId: 'd', status: 503, route: 'agent', error: 'unavailable', replayed: true }),
      ]);
      const all = await store.listRequests({ limit: 10 });
      expect(all.map((r) => r.requestId)).to.deep.equal(['d', 'c', 'b', 'a']);
      expect(all[0]).to.include({ replayed: true, error: 'unavailable' });
      expect((await store.listRequests({ limit: 10, statusClass: 4 })).map((r) => r.requestId)).to.deep.equal(['c', 'a']);
      expect((await store.listRequests({ limit: 10, route: 'mapping:x' })).map((r) => r.requestId)).to.deep.equal(['c', 'b']);
      expect((await store.listRequests({ limit: 10, route: 'mapping:x', statusClass: 2 })).map((r) => r.requestId)).to.deep.equal(['b']);
      expect((await store.listRequests({ limit: 2, before: all[1]!.seq })).map((r) => r.requestId)).to.deep.equal(['b', 'a']);
      await store.logRequests([row({ requestId: 'again', replayOf: all[2]!.seq })]);
      expect((await store.listRequests({ limit: 10, replayOf: all[2]!.seq })).map((r) => r.requestId)).to.deep.equal(['again']);
    });

    it('purges bodies (with their kept headers and query) past their time (hooks.keepBodies) and rows past store.retainDays, in the retention pass', async () => {
      const store = await open({ retainDays: 30 });
      await store.logRequests([
        row({ requestId: 'old', at: iso(T0), body: '{"old":1}', bodyUntil: iso(T0 + 7 * DAY), headers: { 'x-event': 'old' }, query: 'q=1' }),
        row({ requestId: 'kept', at: iso(T0 + 20 * DAY), body: '{"kept":1}', bodyUntil: iso(T0 + 27 * DAY) }),
        row({ requestId: 'long', at: iso(T0 + 20 * DAY), body: '{"long":1}', bodyUntil: iso(T0 + 90 * DAY) }),
      ]);
      clock.now = T0 + 28 * DAY;
      await store.purgeExpired();
      const bodies = async () => Object.fromEntries(await Promise.all((await store.listRequests({ limit: 10 })).map(async (r) => [r.requestId, (await store.getRequest(r.seq))!.body])));
      expect(await bodies()).to.deep.equal({ old: undefined, kept: undefined, long: '{"long":1}' });
      // The kept headers and query go with the body.
      const old = (await store.listRequests({ limit: 10 })).find((r) => r.requestId === 'old')!;
      expect(await store.getRequest(old.seq)).to.not.have.any.keys('headers', 'query', 'body', 'bodyUntil');
      clock.now = T0 + 31 * DAY;
      await store.purgeExpired();
      expect((await store.listRequests({ limit: 10 })).map((r) => r.requestId)).to.deep.equal(['long', 'kept']);
      // retainDays 0 keeps every row, but bodies still go at their time.
      await store.close();
      const forever = await open({ retainDays: 0 });
      clock.now = T0 + 1000 * DAY;
      await forever.purgeExpired();
      expect(await h.count('requests')).to.equal(2);
      expect((await forever.getRequest((await forever.listRequests({ limit: 1 }))[0]!.seq))!.body).to.equal(undefined);
    });

    it('the buffer of the other rows writes them in one transaction after a short wait, is bounded and counts what it drops', async () => {
      const store = await open();
      let dropped = 0;
      const buffer = createRequestLog(store, { maxPending: 5, flushMs: 100, log: silentLogger, onDropped: (n) => (dropped += n) });
      const commits = store.stats().commits;
      const added = Array.from({ length: 8 }, (_, i) => buffer.offer(row, { requestId: `r${i}`, status: 401 }));
      expect(added).to.deep.equal([true, true, true, true, true, false, false, false]);
      expect(dropped).to.equal(3);
      expect(await h.count('requests'), 'nothing is written at once').to.equal(0);
      await new Promise((r) => setTimeout(r, 400));
      expect(await h.count('requests')).to.equal(5);
      expect(store.stats().commits - commits, 'one transaction for the batch').to.equal(1);
      // The store gone: the batch is dropped and counted, the buffer goes on.
      await store.close();
      buffer.offer(row, { requestId: 'lost' });
      await buffer.flush();
      expect(dropped).to.equal(4);
      await buffer.close();
      expect(buffer.offer(row, {}), 'closed').to.equal(false);
      expect(dropped).to.equal(5);
    });
  });
}
