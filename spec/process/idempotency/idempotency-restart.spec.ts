import path from 'node:path';
import { expect } from 'chai';
import { ADMIN_TOKEN, call, freePort, startGateway, tmpDir, type Gateway } from '../../support/gateway.js';

const TOKEN = 'idempotency-restart-token';

/** Keys across process lives: the real bin on one real SQLite data directory. */
describe('idempotency across restarts (real server processes)', function () {
  this.timeout(60000);
  const gateways: Gateway[] = [];

  afterEach(async () => {
    for (const gw of gateways.splice(0)) await gw.kill();
  });

  async function start(dir: string, port: number): Promise<Gateway> {
    const gw = await startGateway(
      {
        server: { host: '127.0.0.1', port },
        dataDir: path.join(dir, 'data'),
        hooks: { token: TOKEN, presets: ['email'] },
        agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'fake' },
        heartbeat: { everySeconds: 3600 },
      },
      { dir },
    );
    gateways.push(gw);
    return gw;
  }
  const wake = (gw: Gateway, key: string) =>
    call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'deploy done', mode: 'next-heartbeat' }, headers: { 'Idempotency-Key': key } });
  /** The wake events' ids (summaries of the e-mail runs land whenever those runs end). */
  const events = async (gw: Gateway) => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events
    .filter((e: { kind: string }) => e.kind === 'wake').map((e: { id: string }) => e.id);

  it('a repeat after a clean restart gets the first answer (Idempotent-Replayed) and acts on nothing', async () => {
    const dir = tmpDir();
    const port = await freePort();
    let gw = await start(dir, port);
    const first = await wake(gw, 'deploy-42');
    expect(first.status).to.equal(200);
    expect(await gw.stop()).to.equal(0);
    gw = await start(dir, port);
    const again = await wake(gw, 'deploy-42');
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.text).to.equal(first.text);
    expect(await events(gw)).to.deep.equal([first.data.eventId]);
  });

  it('SIGKILL between two retries of one key: the 2xx answer was committed with its key, the retry after restart is a replay, exactly one event', async () => {
    const dir = tmpDir();
    const port = await freePort();
    let gw = await start(dir, port);
    const first = await wake(gw, 'crash-1');
    expect(first.status).to.equal(200);
    const batch = await call(`${gw.hooks}/email`, {
      token: TOKEN,
      json: { messages: [{ id: 'm1', from: 'a@b.c', subject: 's', snippet: '', body: 'b' }] },
    });
    expect(batch.status).to.equal(202);
    await gw.kill();
    gw = await start(dir, port);
    const retry = await wake(gw, 'crash-1');
    expect(retry.headers.get('idempotent-replayed')).to.equal('true');
    expect(retry.data.eventId).to.equal(first.data.eventId);
    expect(await events(gw)).to.deep.equal([first.data.eventId]);
    const retried = await call(`${gw.hooks}/email`, {
      token: TOKEN,
      json: { messages: [{ id: 'm1', from: 'a@b.c', subject: 's', snippet: '', body: 'b' }, { id: 'm2', from: 'a@b.c', subject: 's', snippet: '', body: 'b' }] },
    });
    expect(retried.data.actions[0]).to.deep.equal({ ...batch.data.actions[0], replayed: true });
    const runs = (await call(`${gw.hooks}/runs?limit=10`, { token: ADMIN_TOKEN })).data.runs;
    expect(runs).to.have.length(2);
  });
});
