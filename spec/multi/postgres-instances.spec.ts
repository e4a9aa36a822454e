import { expect } from 'chai';
import { startFakeModel, type FakeModel, type ModelRule } from '../support/fake-model.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-providers.js';
import { ADMIN_TOKEN, call, freePort, sleep, startGateway, tmpDir, until, type Gateway } from '../support/gateway.js';
import { freshDatabase } from '../support/postgres.js';

/**
 * The fault test of several instances (CONTRACT.md §10): three real bins on one PostgreSQL
 * database, mixed load spread over all three, the heartbeat leader SIGKILLed mid-burst.
 */
const TOKEN = 'multi-instance-token';
const HEARTBEAT = 'System events since the last heartbeat';
const JOBS = 24;

describe('multi: three instances on one PostgreSQL database, the leader SIGKILLed mid-burst', function () {
  this.timeout(90_000);
  let model: FakeModel;
  let fake: FakeProvider;
  const gws: Gateway[] = [];
  const heartbeats = () => model.requests.filter((r) => r.user.startsWith(HEARTBEAT)).length;

  before(async () => {
    const rules: ModelRule[] = [{ match: HEARTBEAT, reply: 'HEARTBEAT_OK' }];
    // Each job's reply is its own text, so that a delivery sent twice shows at the provider;
    // a slow model keeps runs in flight on the instance that is killed.
    for (let i = 0; i < JOBS; i++) rules.push({ match: `job-${i} `, reply: `answer to job-${i}`, delayMs: 400 + (i % 4) * 300 });
    model = await startFakeModel(rules);
    fake = await startFakeProvider('telegram');
    const url = await freshDatabase('multi');
    const dir = tmpDir('hookrelay-multi-');
    // One after the other: the first is the heartbeat leader (the first to try the lock).
    for (let n = 0; n < 3; n++) {
      gws.push(await startGateway({
        server: { host: '127.0.0.1', port: await freePort() },
        dataDir: `${dir}/data-${n}`,
        store: { kind: 'postgres', url, leaseSeconds: 3 },
        hooks: { token: TOKEN },
        agent: { baseUrl: model.baseUrl, model: 'fake', maxConcurrent: 8 },
        session: { provider: 'telegram', to: fake.to },
        providers: { telegram: fake.config },
        heartbeat: { everySeconds: 3600 },
      }, { env: { HOOKRELAY_LOG_LEVEL: 'info' } }));
    }
  });
  after(async () => {
    for (const g of gws) await g.stop();
    await fake?.close();
    await model?.close();
  });

  it('every 2xx present once, every run ended (the dead one\'s by a survivor), one heartbeat per burst, no acknowledged delivery twice, leader taken over', async () => {
    const [a, b, c] = gws as [Gateway, Gateway, Gateway];
    await a.logged('this instance is the heartbeat leader');

    // Burst 1: `now` wakes on all three at once reach the leader; one heartbeat turn.
    const wakes1 = await Promise.all(gws.flatMap((g, n) => [0, 1].map((k) => call(`${g.hooks}/wake`, { token: TOKEN, json: { text: `burst1 ${n}.${k}`, mode: 'now' } }))));
    for (const r of wakes1) expect(r.status, r.text).to.equal(200);
    await until('the first heartbeat', async () => (heartbeats() >= 1 ? true : undefined));
    await sleep(1000);
    expect(heartbeats(), 'one heartbeat for burst 1').to.equal(1);

    // The mixed burst: agents with delivery (each keyed, sent to two instances), wakes, over
    // all three; A (the leader) is SIGKILLed while it is under way.
    const eventIds = new Set<string>();
    const runIds = new Map<number, string>();
    const send = async (i: number) => {
      const targets = [gws[i % 3]!, gws[(i + 1) % 3]!];
      for (const g of targets) {
        const r = await call(`${g.hooks}/agent`, {
          token: TOKEN, headers: { 'Idempotency-Key': `job-${i}` },
          json: { message: `job-${i} please`, deliver: true, channel: 'telegram', to: fake.to, wakeMode: 'next-heartbeat' },
        }).catch(() => undefined); // the killed instance: no answer
        if (r && r.status === 202) {
          const prev = runIds.get(i);
          if (prev) expect(r.data.runId, `job-${i}: a keyed retry gets the first run`).to.equal(prev);
          runIds.set(i, r.data.runId);
        } else if (r) expect(r.status, r.text).to.be.oneOf([202, 503]);
      }
      const w = await call(`${gws[(i + 2) % 3]!.hooks}/wake`, { token: TOKEN, json: { text: `mixed ${i}`, mode: 'next-heartbeat' } }).catch(() => undefined);
      if (w?.status === 200) eventIds.add(w.data.eventId ?? w.data.id);
    };
    const burst = Promise.all(Array.from({ length: JOBS }, (_, i) => sleep(i * 40).then(() => send(i))));
    await sleep(500);
    await a.kill();
    const sentBeforeKill = fake.texts.length;
    await burst;
    expect(runIds.size, 'most jobs were answered').to.be.at.least(JOBS - 4);

    // The leader is taken over by a survivor, which catches up on the events waiting.
    await until('a new leader', async () => ([b, c].some((g) => g.output().includes('this instance is the heartbeat leader')) ? true : undefined), 10_000);

    // Every 2xx-answered run is there once and ends (A's running ones by a survivor: interrupted).
    const ended = await until('every run ended', async () => {
      const runs = await Promise.all([...runIds.values()].map(async (id) => (await call(`${b.hooks}/runs/${id}`, { token: ADMIN_TOKEN })).data.run));
      return runs.every((r) => r && r.status !== 'queued' && r.status !== 'running' && r.delivery?.status !== 'pending') ? runs : undefined;
    }, 60_000);
    const interrupted = ended.filter((r) => r.errorCode === 'interrupted');
    expect(interrupted.length, 'runs in flight on A were ended by a survivor').to.be.at.least(1);
    await until('a survivor to log the interrupted run', () => /run interrupted by a crash marked failed/.test(c.output() + b.output()));
    for (const r of ended) expect(r.status).to.be.oneOf(['succeeded', 'failed']);

    // No delivery sent twice after it was acknowledged (CONTRACT.md §9): each reply text reached
    // the provider once, and at least once for a run whose delivery settled as delivered. The
    // one exception is what the kill may fall on: A sent a reply and died before committing the
    // provider's answer. Then the survivor's attempt (the row's second) sends it again: a
    // second copy only of a reply whose first arrived before the kill, with attempts ≥ 2.
    const texts = fake.texts;
    const copies = new Map<string, number>();
    for (const t of texts) copies.set(t, (copies.get(t) ?? 0) + 1);
    for (const [text, n] of copies) {
      if (n === 1) continue;
      expect(n, `sent more than twice: ${text}`).to.equal(2);
      expect(texts.indexOf(text), `${text}: sent twice, the first copy after A was killed`).to.be.below(sentBeforeKill);
      expect(ended.find((r) => r.reply === text)?.delivery?.attempts, `${text}: sent twice by one attempt`).to.be.at.least(2);
    }
    for (const r of ended.filter((x) => x.delivery?.status === 'delivered')) expect(texts).to.include(r.reply);

    // Every 2xx event once, in one order, read through any instance.
    const events = (await call(`${c.hooks}/events?after=0&limit=1000`, { token: ADMIN_TOKEN })).data.events as { id: string; seq: number }[];
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of eventIds) expect(ids).to.include(id);
    const runList = (await call(`${b.hooks}/runs?limit=200`, { token: ADMIN_TOKEN })).data.runs as { runId: string }[];
    expect(runList.length, 'one run per job, whatever the retries').to.equal(new Set(runList.map((r) => r.runId)).size);
    expect(runList.length).to.be.at.most(JOBS);
    for (const id of runIds.values()) expect(runList.map((r) => r.runId)).to.include(id);

    // Burst 2, after the takeover: one heartbeat turn, by the new leader.
    await sleep(1500);
    const before = heartbeats();
    const wakes2 = await Promise.all([b, c].flatMap((g, n) => [0, 1, 2].map((k) => call(`${g.hooks}/wake`, { token: TOKEN, json: { text: `burst2 ${n}.${k}`, mode: 'now' } }))));
    for (const r of wakes2) expect(r.status, r.text).to.equal(200);
    await until('the heartbeat of burst 2', async () => (heartbeats() > before ? true : undefined), 5000);
    await sleep(1000);
    expect(heartbeats() - before, 'one heartbeat for burst 2').to.equal(1);
  });
});
