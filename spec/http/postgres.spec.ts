import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../support/fake-model.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-providers.js';
import { BIN, ROOT, call, freePort, sleep, startGateway, tmpDir, type Gateway } from '../support/gateway.js';
import { freshDatabase, startCluster, withDatabase, type Cluster } from '../support/postgres.js';

const run = promisify(execFile);
const TOKEN = 'postgres-spec-token';

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

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
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
        const r = (await call(`${gw!.hooks}/runs/${runId}`, { token: TOKEN })).data.run;
        return r.delivery?.status === 'delivered' ? r : undefined;
      });
      expect(done).to.include({ status: 'succeeded', reply: 'Sunny, 21 °C', deliveredTo: `telegram:${fake.to}` });
      expect(fake.texts).to.deep.equal(['Sunny, 21 °C']);
      const events = (await call(`${gw.hooks}/events?after=0`, { token: TOKEN })).data.events as { kind: string; text: string; seq: number }[];
      expect(events.map((e) => e.kind)).to.deep.equal(['wake', 'summary']);
      expect(events[0]!.seq).to.be.below(events[1]!.seq);

      // The read-only commands, beside the running server.
      const runs = await run(process.execPath, [BIN, 'runs', runId, '--config', gw.configFile], { cwd: ROOT });
      expect(JSON.parse(runs.stdout)).to.include({ runId, status: 'succeeded' });
      const ev = await run(process.execPath, [BIN, 'events', '--config', gw.configFile], { cwd: ROOT });
      expect(ev.stdout).to.match(/^#\d+ \S+ wake wake: hello from pg$/m);
    } finally {
      await fake.close();
      await model.close();
    }
  });

  it('the database stops under requests: 503 unavailable meanwhile, 2xx again once it is back, nothing answered 2xx lost', async () => {
    // A cluster of its own: this one is stopped and started.
    const cluster: Cluster = await startCluster();
    try {
      const { config } = await configFor(withDatabase(cluster.url, 'postgres'));
      gw = await startGateway(config);
      const acked: string[] = [];
      const refused: { status: number; code?: string }[] = [];
      let stop = false;
      let i = 0;
      const load = (async () => {
        while (!stop) {
          const r = await call(`${gw!.hooks}/wake`, { token: TOKEN, json: { text: `w${i++}`, mode: 'next-heartbeat' } });
          if (r.status === 200) acked.push(r.data.eventId);
          else refused.push({ status: r.status, code: r.data?.error?.code });
          await sleep(5);
        }
      })();
      await until('some accepted', async () => (acked.length >= 20 ? true : undefined));
      await cluster.stop();
      await until('requests refused while it is down', async () => (refused.length >= 5 ? true : undefined)).catch((err) => {
        throw new Error(`${(err as Error).message}; the server said:\n${gw!.output().slice(-3000)}`);
      });
      const ackedWhileDown = acked.length;
      await sleep(300);
      await cluster.start();
      await until('accepted again', async () => (acked.length >= ackedWhileDown + 20 ? true : undefined), 30_000);
      stop = true;
      await load;

      expect(refused.length).to.be.greaterThan(0);
      for (const r of refused) expect(r).to.deep.equal({ status: 503, code: 'unavailable' });
      const listed = new Set<string>();
      for (let after = 0; ;) {
        const r = await call(`${gw.hooks}/events?after=${after}&limit=1000`, { token: TOKEN });
        expect(r.status, r.text).to.equal(200);
        if (r.data.events.length === 0) break;
        for (const e of r.data.events) listed.add(e.id);
        after = r.data.events[r.data.events.length - 1].seq;
      }
      for (const id of acked) expect(listed.has(id), `acked event ${id} is stored`).to.equal(true);
      expect(gw.output(), 'the URL is never printed with a password').to.not.match(/postgres:\/\/[^@\s]*:[^@\s*]+@/);
    } finally {
      await gw?.stop();
      gw = undefined;
      await cluster.stop().catch(() => {});
    }
  });
});
