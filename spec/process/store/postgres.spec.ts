import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { startFakeProvider, type FakeProvider } from '../../support/fake-providers.js';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, sleep, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';
import { freshDatabase, startCluster, withDatabase, type Cluster } from '../../support/postgres.js';

const run = promisify(execFile);
const TOKEN = 'postgres-spec-token';
const HEARTBEAT = 'System events since the last heartbeat';

async function configFor(url: string, extra: Record<string, unknown> = {}) {
  const dir = tmpDir('hookrelay-pg-');
  return {
    dir,
    config: {
      server: { host: '127.0.0.1', port: await freePort() },
      dataDir: `${dir}/data`,
      store: { kind: 'postgres', url },
      hooks: { token: TOKEN },
      agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'fake' },
      heartbeat: { everySeconds: 3600 },
      ...extra,
    },
  };
}

describe('http: the real bin on PostgreSQL (store.kind: postgres)', function () {
  this.timeout(90_000);
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('accept → run → delivery end to end; `hookrelay runs` and `events` read the same database', async () => {
    const model = await startFakeModel([{ match: 'weather', reply: 'Sunny, 21 °C' }]);
    const fake = await startFakeProvider('telegram');
    try {
      const { config } = await configFor(await freshDatabase('e2e'), {
        agent: { baseUrl: model.baseUrl, model: 'fake' },
        session: { provider: 'telegram', to: fake.to },
        providers: { telegram: fake.config },
      });
      gw = await startGateway(config);
      const w = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'hello from pg', mode: 'next-heartbeat' } });
      expect(w.status, w.text).to.equal(200);
      const a = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'what is the weather?', deliver: true, channel: 'telegram', to: fake.to } });
      expect(a.status, a.text).to.equal(202);
      const runId: string = a.data.runId;
      const done = await until('the run delivered', async () => {
        const r = (await call(`${gw!.hooks}/runs/${runId}`, { token: ADMIN_TOKEN })).data.run;
        return r.delivery?.status === 'delivered' ? r : undefined;
      });
      expect(done).to.include({ status: 'succeeded', reply: 'Sunny, 21 °C', deliveredTo: `telegram:${fake.to}` });
      expect(fake.texts).to.deep.equal(['Sunny, 21 °C']);
      const events = (await call(`${gw.hooks}/events?after=0`, { token: ADMIN_TOKEN })).data.events as { kind: string; text: string; seq: number }[];
      expect(events.map((e) => e.kind)).to.deep.equal(['wake', 'summary']);
      expect(events[0]!.seq).to.be.below(events[1]!.seq);

      // The read-only commands, beside the running server.
      const runs = await run(BIN, ['runs', runId, '--config', gw.configFile], { cwd: ROOT });
      expect(JSON.parse(runs.stdout)).to.include({ runId, status: 'succeeded' });
      const ev = await run(BIN, ['events', '--config', gw.configFile], { cwd: ROOT });
      expect(ev.stdout).to.match(/^#\d+ +\S+ +wake +wake +hello from pg$/m);
    } finally {
      await fake.close();
      await model.close();
    }
  });

  it('the database restarts under requests spread over two instances: 503 unavailable meanwhile, both serve again, every 2xx once, the heartbeat leader re-elected', async () => {
    // A cluster of its own: this one is stopped and started.
    const cluster: Cluster = await startCluster();
    const model = await startFakeModel([{ match: HEARTBEAT, reply: 'HEARTBEAT_OK' }]);
    const gws: Gateway[] = [];
    try {
      const url = withDatabase(cluster.url, 'postgres');
      // One after the other: the first is the heartbeat leader.
      for (let n = 0; n < 2; n++) {
        const { config } = await configFor(url, { agent: { baseUrl: model.baseUrl, model: 'fake' } });
        gws.push(await startGateway(config, { env: { HOOKRELAY_LOG_LEVEL: 'info' } }));
      }
      const [a, b] = gws as [Gateway, Gateway];
      const leading = (g: Gateway) => {
        const o = g.output();
        return o.lastIndexOf('this instance is the heartbeat leader') > o.lastIndexOf('this instance is no longer the heartbeat leader');
      };
      const heartbeats = () => model.requests.filter((r) => r.user.startsWith(HEARTBEAT)).length;
      expect(leading(a), 'the first instance leads').to.equal(true);

      // Two clients, each sending to both instances in turn.
      const acked: string[] = [];
      const ackedBy = [0, 0];
      const refused: { status: number; code?: string }[] = [];
      const refusedBy = [0, 0];
      let stop = false;
      let i = 0;
      const client = async () => {
        while (!stop) {
          const n = i++ % 2;
          const r = await call(`${gws[n]!.hooks}/wake`, { token: TOKEN, json: { text: `w${i}`, mode: 'next-heartbeat' } });
          if (r.status === 200) {
            acked.push(r.data.eventId);
            ackedBy[n]!++;
          } else {
            refused.push({ status: r.status, code: r.data?.error?.code });
            refusedBy[n]!++;
          }
          await sleep(5);
        }
      };
      const load = Promise.all([client(), client()]);
      await until('some accepted by each', async () => (ackedBy[0]! >= 20 && ackedBy[1]! >= 20 ? true : undefined));
      await cluster.stop();
      await until('requests refused by both while it is down', async () => (refusedBy[0]! >= 5 && refusedBy[1]! >= 5 ? true : undefined)).catch((err) => {
        throw new Error(`${(err as Error).message}; the servers said:\n${a.output().slice(-2000)}\n${b.output().slice(-2000)}`);
      });
      await until('the leader gone with its connection', async () => (!leading(a) && !leading(b) ? true : undefined));
      const [downA, downB] = ackedBy as [number, number];
      // Down for longer than the leadership retry (1 s): two of each instance's attempts fail meanwhile.
      const failedTries = (g: Gateway) => g.output().split('heartbeat leadership: the database is unavailable; trying again').length - 1;
      const triedBefore = gws.map(failedTries);
      await until('two failed leadership attempts on each instance', async () => gws.every((g, n) => failedTries(g) >= triedBefore[n]! + 2), 20_000);
      await cluster.start();
      await until('both accepting again', async () => (ackedBy[0]! >= downA + 20 && ackedBy[1]! >= downB + 20 ? true : undefined), 30_000);
      stop = true;
      await load;

      expect(refused.length).to.be.greaterThan(0);
      for (const r of refused) expect(r).to.deep.equal({ status: 503, code: 'unavailable' });
      const listed: string[] = [];
      for (let after = 0; ;) {
        const r = await call(`${b.hooks}/events?after=${after}&limit=1000`, { token: ADMIN_TOKEN });
        expect(r.status, r.text).to.equal(200);
        if (r.data.events.length === 0) break;
        for (const e of r.data.events) listed.push(e.id);
        after = r.data.events[r.data.events.length - 1].seq;
      }
      expect(new Set(listed).size, 'no event stored twice').to.equal(listed.length);
      const stored = new Set(listed);
      for (const id of acked) expect(stored.has(id), `acked event ${id} is stored`).to.equal(true);

      // A new leader (either), which LISTENs again: a `now` wake accepted by the other one
      // gets one heartbeat turn. The waiting events' catch-up heartbeat goes first.
      const leader = await until('a leader again', async () => gws.find(leading), 10_000);
      const follower = leader === a ? b : a;
      await until('the catch-up heartbeat', async () => (heartbeats() >= 1 ? true : undefined), 10_000);
      await sleep(1000);
      const before = heartbeats();
      const w = await call(`${follower.hooks}/wake`, { token: TOKEN, json: { text: 'after the restart', mode: 'now' } });
      expect(w.status, w.text).to.equal(200);
      await until('the heartbeat of the `now` wake', async () => (heartbeats() > before ? true : undefined), 5000);
      await sleep(1000);
      expect(heartbeats() - before, 'one heartbeat turn').to.equal(1);
      expect(model.requests.at(-1)!.user).to.include('after the restart');
      for (const g of gws) expect(g.output(), 'the URL is never printed with a password').to.not.match(/postgres:\/\/[^@\s]*:[^@\s*]+@/);
    } finally {
      for (const g of gws) await g.stop();
      await model.close();
      await cluster.stop().catch(() => {});
    }
  });
});
