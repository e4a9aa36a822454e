import { expect } from 'chai';
import { PROVIDERS } from '../../../src/config/schema.js';
import { expectSend, startFakeProvider, type FakeProvider } from '../../support/fake-providers.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { until } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

const REPLY = 'The build is green again.';

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** The run once it has ended (GET {path}/runs/ID). */
async function endedRun(gw: InProcess, runId: string): Promise<any> {
  let run: any;
  return until(() => `run ${runId} to end (still ${run?.status})`, async () => {
    const res = await fetch(`${gw.hooks}/runs/${runId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    ({ run } = (await res.json()) as { run: any });
    return run.endedAt && run.delivery?.status !== 'pending' ? run : undefined; // ended, and its delivery settled
  }, 10_000, 25);
}

describe('http: /agent delivers through every provider (real listener, fake provider APIs)', () => {
  let model: FakeModel;
  before(async () => { model = await startFakeModel([{ reply: REPLY }]); });
  after(async () => { await model.close(); });

  for (const name of PROVIDERS) {
    describe(name, () => {
      let fake: FakeProvider;
      let gw: InProcess;
      before(async () => {
        fake = await startFakeProvider(name);
        gw = await startInProcess({ agent: { baseUrl: model.baseUrl }, providers: { [name]: fake.config } });
      });
      after(async () => { await gw?.stop(); await fake?.close(); });

      it(`sends the reply with exactly ${name}'s request, and the run shows deliveredTo`, async () => {
        const accepted = await post(`${gw.hooks}/agent`, { message: 'how is the build?', deliver: true, provider: name, to: fake.to });
        expect(accepted.status).to.equal(202);
        const run = await endedRun(gw, accepted.body.runId);
        expect(run).to.include({ status: 'succeeded', reply: REPLY, deliveredTo: `${name}:${fake.to}` });
        expect(fake.messages).to.have.length(1);
        expectSend(fake, fake.messages[0]!, REPLY);
      });
    });
  }

  describe('a provider that is not configured', () => {
    let gw: InProcess;
    before(async () => { gw = await startInProcess({ agent: { baseUrl: model.baseUrl } }); });
    after(async () => { await gw.stop(); });

    it('is 400 invalid_payload naming what to configure, and nothing is run', async () => {
      const before = model.requests.length;
      const res = await post(`${gw.hooks}/agent`, { message: 'm', provider: 'slack', to: 'C1' });
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ ok: false, error: { code: 'invalid_payload', message: 'provider slack is not configured: providers.slack.botToken is empty' } });
      await new Promise((r) => setTimeout(r, 200));
      expect(model.requests.length).to.equal(before);
    });
  });
});
