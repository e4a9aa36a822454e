import { expect } from 'chai';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { ADMIN_TOKEN, call, freePort, sleep, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';

/**
 * Forward mode across a crash (CONTRACT.md §9): the real bin accepts a wake and an agent
 * action while the upstream is down, is killed (SIGKILL) with both forwards pending, and
 * restarts on the same data directory once the upstream is up: each action arrives upstream
 * exactly once per idempotency key, and the run ends succeeded with the upstream's run id.
 */
describe('http: forward mode resumes after a SIGKILL and restart (real bin)', function () {
  this.timeout(60_000);
  const TOKEN = 'forward-restart-token-0123';
  let upstream: FakeUpstream | undefined;
  let gw: Gateway | undefined;

  afterEach(async () => {
    await gw?.kill();
    gw = undefined;
    await upstream?.close();
    upstream = undefined;
  });

  it('the upstream down, hookrelay killed and restarted: every accepted action is forwarded once per key', async () => {
    const dir = tmpDir('hookrelay-forward-restart-');
    const upstreamPort = await freePort(); // nothing listens there yet: connection refused
    const upstreamToken = 'upstream-SECRET-token-42';
    const config = {
      server: { host: '127.0.0.1', port: await freePort() },
      dataDir: `${dir}/data`,
      hooks: { token: TOKEN },
      heartbeat: { everySeconds: 3600 },
      delivery: { maxDelaySeconds: 1 },
      runtime: { kind: 'forward', forward: { url: `http://127.0.0.1:${upstreamPort}/hooks`, token: upstreamToken, timeoutSeconds: 2 } },
    };
    gw = await startGateway(config, { dir });
    const w = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'disk almost full' } });
    const a = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'look into the disk', name: 'Ops' } });
    const b = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'and the backups' } });
    expect([w.status, a.status, b.status]).to.deep.equal([200, 202, 202]);
    // Each of the three has been tried at the closed port (each refusal is logged with its row).
    const refused = () => new Set(gw!.output().split('\n').filter((l) => l.includes('delivery attempt failed; retrying')).map((l) => JSON.parse(l).deliveryId));
    await until(() => `a refused attempt of each action: ${[...refused()]}`, () => refused().size === 3, 20_000);
    expect((await call(`${gw.hooks}/runs/${a.data.runId}`, { token: ADMIN_TOKEN })).data.run.status).to.equal('queued');
    await gw.kill();

    upstream = await startFakeUpstream({ port: upstreamPort, token: upstreamToken });
    gw = await startGateway(config, { dir });
    const runIds = [a.data.runId as string, b.data.runId as string];
    let runs: any[] = [];
    await until(() => `both runs forwarded and 3 upstream calls: ${JSON.stringify(runs)} ${upstream!.calls.length} calls`, async () => {
      runs = await Promise.all(runIds.map(async (id) => (await call(`${gw!.hooks}/runs/${id}`, { token: ADMIN_TOKEN })).data.run));
      return runs.every((r) => r.status === 'succeeded') && upstream!.calls.length >= 3;
    }, 20_000);
    await sleep(1_500); // nothing more arrives
    const keys = upstream.calls.map((c) => c.headers['x-openclaw-idempotency-key']).sort();
    expect(keys, 'each action once per key').to.deep.equal([w.data.eventId, ...runIds].sort());
    expect(upstream.actions.find((x) => x.key === w.data.eventId)!.body).to.deep.equal({ text: 'disk almost full', mode: 'now' });
    for (const [i, run] of runs.entries()) {
      const action = upstream.actions.find((x) => x.key === runIds[i])!;
      expect(run.forwarded).to.deep.equal({ status: 200, upstreamRunId: action.runId });
    }
    expect(upstream.actions.find((x) => x.key === runIds[0])!.body).to.include({ message: 'look into the disk', name: 'Ops' });
  });
});
