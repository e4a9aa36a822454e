import { expect } from 'chai';
import { storesFor, type Harness } from './harness.js';
import type { NewCallback, NewDelivery, NewRun } from '../../../../src/store/records.js';
import { iso, T0 } from '../fixtures.js';

const DAY = 24 * 60 * 60 * 1000;

const run = (runId: string, callbackUrl?: string): NewRun => ({
  runId, sessionKey: `hook:${runId}`, message: `msg ${runId}`, wakeMode: 'now', deliver: true, provider: 'telegram', to: '555',
  source: 'agent', unsafe: false, createdAt: iso(T0), ...(callbackUrl ? { callbackUrl } : {}),
});
const reply: NewDelivery = { kind: 'run', provider: 'telegram', to: '555', parts: ['hi'], createdAt: iso(T0) };
const callback = (runId: string): NewCallback => ({
  kind: 'callback', url: 'https://cb.example/in?token=t0ps3cret', body: JSON.stringify({ runId, status: 'succeeded' }), createdAt: iso(T0),
});

/** run callbacks (docs/callbacks.md): the run keeps its URL, and its end commits the callback row beside its reply's */
export function callbacksContract(h: Harness): void {
  describe('run callbacks', function () {
    this.timeout(30000);
    const open = storesFor(h, () => new Date(T0));
    const far = iso(T0 + DAY);

    it('a run keeps its callbackUrl; its end commits a callback row beside its reply row, both claimable, each shown on the run', async () => {
      const store = await open();
      await store.accept([], [run('r1', 'https://cb.example/in?token=t0ps3cret'), run('r2')]);
      const claimed = await store.claimRuns(10, iso(T0));
      expect(claimed.find((r) => r.runId === 'r1')!.callbackUrl).to.equal('https://cb.example/in?token=t0ps3cret');
      expect(claimed.find((r) => r.runId === 'r2')).not.to.have.property('callbackUrl');
      await store.finishRun('r1', { status: 'succeeded', endedAt: iso(T0), reply: 'hi' }, { delivery: reply, callback: callback('r1') });
      const ended = (await store.getRun('r1'))!;
      expect(ended.delivery).to.deep.equal({ status: 'pending', target: 'telegram:555', attempts: 0 });
      expect(ended.callback).to.deep.equal({ status: 'pending', attempts: 0 });

      const { deliveries } = await store.claimDeliveries(iso(T0), 10, far);
      expect(deliveries.map((d) => d.kind).sort()).to.deep.equal(['callback', 'run']);
      const cb = deliveries.find((d) => d.kind === 'callback')!;
      expect(cb).to.include({ runId: 'r1', url: 'https://cb.example/in?token=t0ps3cret', target: 'callback:cb.example', attempts: 1 });
      expect(cb.parts).to.deep.equal([JSON.stringify({ runId: 'r1', status: 'succeeded' })]);

      await store.retryDelivery(cb.id, iso(T0 + 1000), 'callback: HTTP 500');
      expect((await store.getRun('r1'))!.callback).to.deep.equal({ status: 'pending', attempts: 1, error: 'callback: HTTP 500' });
      await store.settleDelivery(cb.id, { status: 'delivered', at: iso(T0) }, {});
      const settled = (await store.getRun('r1'))!;
      expect(settled.callback).to.include({ status: 'delivered', attempts: 1 });
      expect(settled.delivery, 'the reply row is its own').to.include({ status: 'pending' });
      expect((await store.listRuns({ limit: 5 })).find((r) => r.runId === 'r1')!.callback).to.include({ status: 'delivered' });
    });
  });
}
