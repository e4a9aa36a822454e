import { expect } from 'chai';
import { storesAt, type Harness, type TestStore } from './harness.js';
import type { NewDelivery, NewEvent, NewForward, NewKey, NewRun } from '../../../../src/store/records.js';
import { StoreError } from '../../../../src/store/store.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const run = (runId: string, at = T0): NewRun => ({
  runId, sessionKey: `hook:${runId}`, message: `msg ${runId}`, wakeMode: 'now', deliver: true, provider: 'telegram', to: '555',
  source: 'agent', unsafe: false, createdAt: iso(at),
});
const reply = (parts: string[], at = T0, kind: NewDelivery['kind'] = 'run'): NewDelivery => ({ kind, provider: 'telegram', to: '555', parts, createdAt: iso(at) });
const summary = (id: string): NewEvent => ({ id, kind: 'summary', text: `summary ${id}`, source: `run:${id}`, at: iso(T0), unsafe: true });

/** the delivery outbox */
export function outboxContract(h: Harness): void {
  describe('the delivery outbox', function () {
    this.timeout(30000);
    const { clock, open } = storesAt(h, T0);

    const far = iso(T0 + DAY);

    /** A run ended with its reply queued for delivery. */
    async function queued(store: TestStore, runId: string, parts: string[]) {
      await store.accept([], [run(runId)]);
      await store.claimRuns(10, iso(T0));
      await store.finishRun(runId, { status: 'succeeded', endedAt: iso(T0), reply: parts.join(' ') }, { delivery: reply(parts) });
    }

    it('finishRun commits the outbox row with the run; the run shows it pending, and a claim leases it once', async () => {
      const store = await open();
      await queued(store, 'r1', ['one', 'two']);
      expect((await store.getRun('r1'))!.delivery).to.deep.equal({ status: 'pending', target: 'telegram:555', attempts: 0 });

      const first = await store.claimDeliveries(iso(T0), 10, far);
      expect(first.deliveries).to.have.length(1);
      expect(first.deliveries[0]).to.include({ kind: 'run', runId: 'r1', provider: 'telegram', to: '555', target: 'telegram:555', partsSent: 0, attempts: 1, status: 'pending' });
      expect(first.deliveries[0]!.parts).to.deep.equal(['one', 'two']);
      expect(first.nextAt, 'the leased row is next due when its lease ends').to.equal(far);
      // Leased: a second claim, even later, does not take it again before the lease ends.
      expect((await store.claimDeliveries(iso(T0 + 1000), 10, far)).deliveries).to.deep.equal([]);
      expect((await store.listRuns({ limit: 5 }))[0]!.delivery).to.include({ status: 'pending', attempts: 1 });
    });

    it('ackPart is committed per part and a retry resumes after the acknowledged ones, due at its time', async () => {
      const store = await open();
      await queued(store, 'r1', ['one', 'two', 'three']);
      const [d] = (await store.claimDeliveries(iso(T0), 10, far)).deliveries;
      await store.ackPart(d!.id, 0);
      await store.ackPart(d!.id, 0); // idempotent
      await store.retryDelivery(d!.id, iso(T0 + 4000), 'telegram: Too Many Requests');
      expect((await store.getRun('r1'))!.delivery).to.deep.equal({ status: 'pending', target: 'telegram:555', attempts: 1, error: 'telegram: Too Many Requests' });
      const early = await store.claimDeliveries(iso(T0 + 3999), 10, far);
      expect(early.deliveries).to.deep.equal([]);
      expect(early.nextAt).to.equal(iso(T0 + 4000));
      const [again] = (await store.claimDeliveries(iso(T0 + 4000), 10, far)).deliveries;
      expect(again).to.include({ id: d!.id, partsSent: 1, attempts: 2 });
    });

    it('settleDelivery commits the run\'s deliveredTo and its summary with the row, once', async () => {
      const store = await open();
      await queued(store, 'r1', ['one']);
      const [d] = (await store.claimDeliveries(iso(T0), 10, far)).deliveries;
      await store.settleDelivery(d!.id, { status: 'delivered', at: iso(T0) }, { summary: summary('r1'), run: { deliveredTo: 'telegram:555' } });
      const r = (await store.getRun('r1'))!;
      expect(r).to.include({ status: 'succeeded', deliveredTo: 'telegram:555' });
      expect(r.delivery).to.deep.equal({ status: 'delivered', target: 'telegram:555', attempts: 1 });
      const err = await store.settleDelivery(d!.id, { status: 'failed', at: iso(T0), error: 'x' }, { summary: summary('again') }).catch((e) => e);
      expect(err).to.be.instanceOf(StoreError).and.include({ code: 'constraint' });
      expect((await store.listEvents(0, 10)).map((e) => e.id), 'the second settle committed nothing').to.deep.equal(['r1']);
    });

    it('a failed settle records the error on the run and its row; a heartbeat row sets state', async () => {
      const store = await open();
      await queued(store, 'r1', ['one']);
      await store.appendHistory('main', [], { 'heartbeat.cursor': '1' }, [], reply(['hb'], T0, 'heartbeat'));
      const ds = (await store.claimDeliveries(iso(T0), 10, far)).deliveries;
      expect(ds.map((d) => d.kind)).to.deep.equal(['run', 'heartbeat']);
      expect(ds[1]!.runId).to.equal(undefined);
      await store.settleDelivery(ds[0]!.id, { status: 'failed', at: iso(T0), error: 'telegram: chat not found' }, {
        run: { error: 'delivery failed: telegram: chat not found', errorCode: 'delivery_failed' },
      });
      expect(await store.getRun('r1')).to.deep.include({
        error: 'delivery failed: telegram: chat not found', errorCode: 'delivery_failed',
        delivery: { status: 'failed', target: 'telegram:555', attempts: 1, error: 'telegram: chat not found' },
      });
      await store.settleDelivery(ds[1]!.id, { status: 'delivered', at: iso(T0) }, { state: { 'main.lastRecipient': '{"provider":"telegram","to":"555"}' } });
      expect(await store.getState('main.lastRecipient')).to.equal('{"provider":"telegram","to":"555"}');
    });

    // SQLite: one process per data directory (its lock), so the process before has stopped;
    // PostgreSQL: a store that closes releases its instance's leases (a crashed one's go after
    // store.leaseSeconds: spec/unit/store/postgres-instances.spec.ts).
    it('a restart clears the leases of the process before: its pending rows are claimable at once', async () => {
      let store = await open();
      await queued(store, 'r1', ['one', 'two']);
      const [d] = (await store.claimDeliveries(iso(T0), 10, far)).deliveries;
      await store.ackPart(d!.id, 0);
      await store.close();
      store = await open();
      const [resumed] = (await store.claimDeliveries(iso(T0 + 1), 10, far)).deliveries;
      expect(resumed).to.include({ id: d!.id, partsSent: 1, attempts: 2 });
    });

    it('retention keeps a run whose delivery is pending and purges a settled one with its row', async () => {
      const store = await open({ retainDays: 30 });
      await queued(store, 'pending', ['p']);
      await queued(store, 'settled', ['s']);
      const ds = (await store.claimDeliveries(iso(T0), 10, far)).deliveries;
      const settled = ds.find((d) => d.runId === 'settled')!;
      await store.settleDelivery(settled.id, { status: 'delivered', at: iso(T0) }, { run: { deliveredTo: 'telegram:555' } });
      clock.now = T0 + 31 * DAY;
      const counts = await store.purgeExpired();
      expect(counts.runs).to.equal(1);
      expect(await store.getRun('settled')).to.equal(undefined);
      expect((await store.getRun('pending'))!.delivery!.status).to.equal('pending');
      expect((await store.claimDeliveries(iso(clock.now), 10, iso(clock.now + DAY))).deliveries.map((d) => d.runId)).to.deep.equal(['pending']);
    });

    it('forward mode: accept commits a forward row per action (left out with a held key); settling ends the run with forwarded', async () => {
      const store = await open();
      const wake: NewEvent = { id: 'w1', kind: 'wake', text: 'hello', source: 'wake', at: iso(T0), unsafe: false };
      const fwd = (path: NewForward['path'], key: string, body: string): NewForward => ({ kind: 'forward', path, key, body, createdAt: iso(T0) });
      const k = (key: string, runs: string[]): NewKey => ({ key, requestHash: 'h', status: 202, body: '{}', at: iso(T0), eventIds: [], runIds: runs });
      await store.accept([wake], [run('a1')], [k('key-1', ['a1'])], [fwd('wake', 'w1', '{"text":"hello","mode":"now"}'), fwd('agent', 'a1', '{"message":"m"}')]);
      // The same key again: its run and that run's forward row are left out.
      expect(await store.accept([], [run('a2')], [k('key-1', ['a2'])], [fwd('agent', 'a2', '{"message":"again"}')])).to.deep.equal([0]);

      const { deliveries } = await store.claimDeliveries(iso(T0), 10, far);
      expect(deliveries.map((d) => [d.kind, d.target, d.runId ?? null, d.parts])).to.deep.equal([
        ['forward', 'forward:wake', null, ['{"text":"hello","mode":"now"}']],
        ['forward', 'forward:agent', 'a1', ['{"message":"m"}']],
      ]);
      expect(deliveries[1]).to.include({ path: 'agent', key: 'a1' });
      // A forward row is not the run's delivery.
      expect((await store.getRun('a1'))!.delivery).to.equal(undefined);

      await store.settleDelivery(deliveries[1]!.id, { status: 'delivered', at: iso(T0 + 5) }, {
        run: { status: 'succeeded', endedAt: iso(T0 + 5), forwarded: { status: 200, upstreamRunId: 'up-1' } },
      });
      expect(await store.getRun('a1')).to.include({ status: 'succeeded', endedAt: iso(T0 + 5) });
      expect((await store.getRun('a1'))!.forwarded).to.deep.equal({ status: 200, upstreamRunId: 'up-1' });
      expect(await store.getRun('a2')).to.equal(undefined);
    });
  });
}
