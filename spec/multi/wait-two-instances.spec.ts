import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../support/fake-model.js';
import { ADMIN_TOKEN, call } from '../support/gateway.js';
import { startInProcess, TOKEN, type InProcess } from '../support/in-process.js';
import { freshDatabase } from '../support/postgres.js';

/**
 * `?wait` with several instances (CONTRACT.md §10, §14): A's only run slot is held, so the run
 * A accepts with ?wait is carried out by B, and A must notice its end (run-waiter.ts polls).
 */
describe('multi: ?wait notices a run that another instance carried out', function () {
  this.timeout(30_000);
  let model: FakeModel;
  let a: InProcess;
  let b: InProcess | undefined;
  let instance: () => Promise<InProcess>;

  before(async () => {
    model = await startFakeModel([{ match: 'hold', reply: 'held', delayMs: 12_000 }, { reply: 'done elsewhere' }]);
    const url = await freshDatabase('multi-wait');
    instance = () => startInProcess({ store: { kind: 'postgres', url }, agent: { baseUrl: model.baseUrl, model: 'fake', maxConcurrent: 1 } });
    a = await instance();
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await model.close();
  });

  it('A waits, B runs it: 200 with the run, well before A could have run it', async () => {
    // Fill A's only slot before B exists, so that the held run is A's.
    const held = await call(`${a.hooks}/agent`, { token: TOKEN, json: { message: 'hold this', deliver: false } });
    expect(held.status).to.equal(202);
    await model.waitForRequests(1, 10_000);
    b = await instance();
    const started = Date.now();
    const r = await call(`${a.hooks}/agent?wait=9`, { token: TOKEN, json: { message: 'quick', deliver: false } });
    expect(r.status, JSON.stringify(r.data)).to.equal(200);
    expect(r.data.run).to.include({ status: 'succeeded', reply: 'done elsewhere' });
    expect(Date.now() - started, 'ended by B while A was still busy').to.be.below(9_000);
    const first = (await call(`${a.hooks}/runs/${held.data.runId}`, { token: ADMIN_TOKEN })).data.run;
    expect(first.status, 'A still holds its slot').to.equal('running');
  });
});
