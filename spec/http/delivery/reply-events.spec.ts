import { expect } from 'chai';
import { call, until } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';

/** A heartbeat's reply is an event of kind `reply`, shown by GET {path}/events (spec/process/delivery/: and `hookrelay events`). */
describe('http: reply events from heartbeat turns', function () {
  this.timeout(30000);
  let gw: InProcess;
  let model: FakeModel;

  before(async () => {
    model = await startFakeModel([{ match: 'quiet', reply: 'HEARTBEAT_OK' }, { match: 'deploy', reply: 'The deploy finished.' }]);
    // No recipient configured: the reply is not delivered, and still recorded.
    gw = await startInProcess({ agent: { baseUrl: model.baseUrl } });
  });
  after(async () => {
    await gw.stop();
    await model.close();
  });

  async function events(): Promise<any[]> {
    const r = await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN });
    expect(r.status).to.equal(200);
    return r.data.events;
  }

  it('GET /events shows the reply after the events it answered; HEARTBEAT_OK leaves none', async () => {
    const quiet = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'quiet' } });
    await model.waitForRequests(1);
    const deploy = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'deploy done' } });
    await model.waitForRequests(2);
    const all = await until('the reply event', async () => {
      const listed = await events();
      return listed.some((e) => e.kind === 'reply') ? listed : undefined;
    }, 10_000, 30);
    expect(all.map((e) => [e.id, e.kind])).to.deep.equal([[quiet.data.eventId, 'wake'], [deploy.data.eventId, 'wake'], [all[2]?.id, 'reply']]);
    expect(all[2]).to.include({ kind: 'reply', text: 'The deploy finished.', source: 'heartbeat' });
    expect(Number.isInteger(all[2].seq)).to.equal(true);
  });
});
