import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { startFakeProvider, type FakeProvider } from '../../support/fake-providers.js';
import { ADMIN_TOKEN, call, until } from '../../support/gateway.js';
import { startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Waiting for a run (CONTRACT.md §14, docs/callbacks.md): `POST {path}/agent?wait=S` answers
 * 200 with the run when it ends within S seconds, else the usual accept answer; OpenClaw's
 * `"waitForCompletion": true` adds its `completion` object (src/http/completion.ts cites
 * OpenClaw's source); mappings stay admission-only; a stopping gateway answers at once.
 */
describe('http: waiting for a run (?wait, waitForCompletion)', function () {
  this.timeout(60_000);
  let model: FakeModel;
  let telegram: FakeProvider;
  let gw: InProcess;
  /** Its server.requestTimeoutMs is 1 s. */
  let strict: InProcess;
  type Answer = Awaited<ReturnType<typeof call>>;
  /** The waits that only need time to pass, sent in `before` so that they overlap the other tests; each test awaits its own. */
  let waitOne: Promise<{ r: Answer; ms: number }>;
  let waitMax: Promise<{ r: Answer; ms: number }>;
  let outlast: Promise<Answer>;
  const timed = async (p: Promise<Answer>) => {
    const started = Date.now();
    const r = await p;
    return { r, ms: Date.now() - started };
  };

  before(async () => {
    model = await startFakeModel([
      // Longer than server.requestTimeoutMs (1 s) and the second between its checks.
      { match: 'outlast', reply: 'slow answer', delayMs: 2_500 },
      { match: 'slow', reply: 'slow answer', delayMs: 4_000 },
      { match: 'quiet', reply: 'HEARTBEAT_OK' },
      { match: 'fail me', status: 400, error: { message: 'bad request' } },
      { reply: 'quick answer', delayMs: 200 },
    ]);
    telegram = await startFakeProvider('telegram');
    gw = await startInProcess({
      agent: { baseUrl: model.baseUrl, model: 'fake' },
      providers: { telegram: telegram.config },
      session: { provider: 'telegram', to: telegram.to },
      hooks: { maxWaitSeconds: 2, mappings: [{ id: 'm', match: { path: 'm' }, messageTemplate: '{{message}}' }] },
    });
    strict = await startInProcess({ agent: { baseUrl: model.baseUrl, model: 'fake' }, server: { headersTimeoutMs: 1000, requestTimeoutMs: 1000 } });
    const early = [
      waitOne = timed(post('agent?wait=1', { message: 'slow one', deliver: false })),
      waitMax = timed(post('agent', { message: 'slow two', deliver: false, waitForCompletion: true })),
      outlast = call(`${strict.hooks}/agent?wait=10`, { token: TOKEN, json: { message: 'outlast the limit', deliver: false } }),
    ];
    for (const p of early) p.catch(() => {});
    // Committed before the tests that count runs: each of these runs has reached the model.
    await until('the early runs to reach the model', () =>
      ['slow one', 'slow two', 'outlast the limit'].every((m) => model.requests.some((q) => q.user.includes(m))), 10_000, 20);
  });
  after(async () => {
    await strict?.stop();
    await gw.stop();
    await telegram.close();
    await model.close();
  });

  const post = (path: string, json: unknown) => call(`${gw.hooks}/${path}`, { token: TOKEN, json });

  it('?wait=S: a run that ends in time is answered 200 with the run', async () => {
    const r = await post('agent?wait=10', { message: 'hello', deliver: false });
    expect(r.status).to.equal(200);
    expect(r.data).to.include({ ok: true, runId: r.data.run.runId, sessionKey: r.data.run.sessionKey });
    expect(r.data.run).to.include({ status: 'succeeded', reply: 'quick answer' });
    expect(r.data).not.to.have.property('completion');
  });

  it('?wait=S: a run that does not end in time gets the usual 202 after S seconds — committed all the same', async () => {
    const { r, ms } = await waitOne;
    expect(r.status).to.equal(202);
    expect(Object.keys(r.data).sort()).to.deep.equal(['ok', 'runId', 'sessionKey']);
    expect(ms).to.be.within(900, 3_500);
    const run = (await call(`${gw.hooks}/runs/${r.data.runId}`, { token: ADMIN_TOKEN })).data.run;
    expect(run.status).to.be.oneOf(['queued', 'running']);
  });

  for (const bad of ['0', '-1', '61', 'abc', '', '1e9']) {
    it(`?wait=${bad} is 400 invalid_payload, and nothing is accepted`, async () => {
      const before = (await call(`${gw.hooks}/runs?limit=100`, { token: ADMIN_TOKEN })).data.runs.length;
      const r = await post(`agent?wait=${bad}`, { message: 'hello' });
      expect(r.status).to.equal(400);
      expect(r.data.error.code).to.equal('invalid_payload');
      expect(r.data.error.message).to.match(/^wait must be a number of seconds greater than 0 and at most 60/);
      expect((await call(`${gw.hooks}/runs?limit=100`, { token: ADMIN_TOKEN })).data.runs).to.have.length(before);
    });
  }

  it('waitForCompletion: a delivered reply — completion ok, visible, delivered, never the reply text', async () => {
    const r = await post('agent', { message: 'hello', deliver: true, provider: 'telegram', to: telegram.to, waitForCompletion: true });
    expect(r.status).to.equal(200);
    expect(r.data.run).to.include({ status: 'succeeded' });
    expect(r.data.run.delivery).to.include({ status: 'delivered' });
    expect(r.data.completion).to.deep.equal({ status: 'ok', replyDisposition: 'visible', delivered: true, deliveryAttempted: true });
    expect(JSON.stringify(r.data.completion)).not.to.include('quick answer');
  });

  it('waitForCompletion: no delivery asked for — delivered and deliveryAttempted false', async () => {
    const r = await post('agent', { message: 'hello', deliver: false, waitForCompletion: true });
    expect(r.data.completion).to.deep.equal({ status: 'ok', replyDisposition: 'visible', delivered: false, deliveryAttempted: false });
  });

  it('waitForCompletion: only the acknowledgment token — replyDisposition empty, nothing sent', async () => {
    const r = await post('agent', { message: 'quiet please', deliver: true, waitForCompletion: true });
    expect(r.data.completion).to.deep.equal({ status: 'ok', replyDisposition: 'empty', delivered: false, deliveryAttempted: false });
  });

  it('waitForCompletion: a failed run — status error', async () => {
    const r = await post('agent', { message: 'fail me', deliver: false, waitForCompletion: true });
    expect(r.status).to.equal(200);
    expect(r.data.run.status).to.equal('failed');
    expect(r.data.completion).to.deep.equal({ status: 'error', replyDisposition: 'empty', delivered: false, deliveryAttempted: false });
  });

  it('waitForCompletion waits at most hooks.maxWaitSeconds, then answers as usual', async () => {
    const { r, ms } = await waitMax;
    expect(r.status).to.equal(202);
    expect(r.data).not.to.have.property('completion');
    expect(ms).to.be.within(1_900, 4_000);
  });

  it('mappings stay admission-only: waitForCompletion in a mapped payload does not wait', async () => {
    const r = await post('m', { message: 'hello', waitForCompletion: true });
    expect(r.status).to.equal(202);
    expect(r.data).not.to.have.property('run');
  });

  it('a wait blocks nothing else: other requests are answered meanwhile', async () => {
    let waited = false;
    const waiting = post('agent?wait=1', { message: 'slow three', deliver: false }).finally(() => { waited = true; });
    const started = Date.now();
    const other = await post('wake', { text: 'meanwhile' });
    expect(other.status).to.equal(200);
    expect(waited, 'answered while the wait was under way').to.equal(false);
    expect(Date.now() - started).to.be.below(1_000);
    expect((await waiting).status).to.equal(202);
  });

  it('a wait may outlast server.requestTimeoutMs: that limit is on receiving the request, which arrived whole', async () => {
    const r = await outlast;
    expect(r.status).to.equal(200);
    expect(r.data.run).to.include({ status: 'succeeded', reply: 'slow answer' });
  });

  it('a stopping gateway ends the waits at once: they get the usual answer', async () => {
    const own = await startInProcess({ agent: { baseUrl: model.baseUrl, model: 'fake' } });
    const waiting = call(`${own.hooks}/agent?wait=60`, { token: TOKEN, json: { message: 'slow four', deliver: false } });
    // Its run is running: the model has its request (other runs of this file may reach the model meanwhile).
    await until('the run to reach the model', () => model.requests.some((q) => q.user.includes('slow four')), 10_000, 20);
    const started = Date.now();
    const stopped = own.stop();
    const r = await waiting;
    expect(r.status).to.equal(202);
    expect(Date.now() - started, 'answered as the stop begins, not after 60 s').to.be.below(3_000);
    await stopped;
  });
});
