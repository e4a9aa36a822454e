import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../support/fake-model.js';
import { startFakeProvider, textOf, type FakeProvider } from '../support/fake-providers.js';
import { ADMIN_TOKEN, call, freePort, startGateway, tmpDir, until, type Gateway } from '../support/gateway.js';

/**
 * The durability promise, tested the hard way: a burst of concurrent /wake, /agent and mapped
 * requests while the real server process is SIGKILLed several times and restarted on the same
 * data directory. Every request that was answered 2xx is then present exactly once, no run is
 * left queued or running, runs cut off by a kill are failed with a reason. Senders retry
 * unanswered requests with their Idempotency-Key, so every key is acted on once and a retry of
 * a committed one gets the first answer. The signed `ci` hook checks signatures throughout. A
 * quarter of the runs deliver a two-part reply to a fake Telegram: every one ends delivered,
 * parts in order, and a part arrives twice only when a kill fell between the provider's answer
 * and its commit.
 */
describe('crash: SIGKILL under load loses nothing that was answered 2xx', function () {
  this.timeout(60_000);
  const ROUNDS = 4;
  const WORKERS = 24;
  const TOKEN = 'crash-token-0123456789';
  const CI_SECRET = 'crash-ci-secret';
  const githubSignature = (body: string) => `sha256=${createHmac('sha256', CI_SECRET).update(body).digest('hex')}`;
  const PART1 = 'a'.repeat(3000);
  const PART2 = 'b'.repeat(2000);
  let model: FakeModel;
  let tg: FakeProvider;
  let gw: Gateway | undefined;
  /** Parts Telegram accepted, per chat (each delivering run has its own chat id). */
  const accepted = new Map<string, string[]>();

  before(async () => {
    // Slow enough that runs are in flight when the kill comes.
    model = await startFakeModel([{ match: 'deliver', reply: `${PART1}\n${PART2}`, delayMs: 250 }, { match: '', reply: 'done', delayMs: 250 }]);
    tg = await startFakeProvider('telegram');
    tg.respond = (c) => {
      if (c.kind !== 'send') return undefined;
      // Accepted at once, answered a little later: a kill may fall in between.
      const chat = String(c.body.chat_id);
      accepted.set(chat, [...(accepted.get(chat) ?? []), textOf('telegram', c.body).slice(0, 1)]);
      return { status: 200, body: { ok: true, result: { message_id: 1 } }, delayMs: 40 };
    };
  });
  after(async () => {
    await gw?.kill();
    await model.close();
    await tg.close();
  });

  it('keeps every acknowledged event and run, exactly once, across 4 kills', async () => {
    const dir = tmpDir('hookrelay-crash-');
    const port = await freePort();
    const config = {
      server: { host: '127.0.0.1', port },
      dataDir: `${dir}/data`,
      hooks: {
        token: TOKEN,
        mappings: [
          { id: 'ci', match: { path: 'ci' }, verify: { scheme: 'github', secret: CI_SECRET }, auth: 'signature', action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'build {{n}} {{status}}' },
          { id: 'task', match: { path: 'task' }, action: 'agent', messageTemplate: 'task {{n}}', deliver: false },
        ],
      },
      agent: { baseUrl: model.baseUrl, model: 'fake', timeoutSeconds: 30, maxConcurrent: 4 },
      heartbeat: { everySeconds: 3600 },
      providers: { telegram: tg.config },
    };
    const events = new Set<string>();
    const runs = new Set<string>();
    const delivering = new Map<string, string>(); // runId → chat id
    let n = 0;
    /** Requests sent but not answered yet (the kill cut them off): retried with their key. */
    const unanswered = new Map<number, [string, unknown]>();
    /** Request i: where it goes, its body, and for a delivering run the chat it delivers to. */
    const request = (i: number, hooks: string): [string, unknown, string?] => {
      const pick = i % 4;
      return pick === 0 ? [`${hooks}/wake`, { text: `wake ${i}`, mode: 'next-heartbeat' }]
        : pick === 1 && i % 8 === 1 ? [`${hooks}/agent`, { message: `deliver ${i}`, deliver: true, provider: 'telegram', to: `chat-${i}`, wakeMode: 'next-heartbeat' }, `chat-${i}`]
        : pick === 1 ? [`${hooks}/agent`, { message: `agent ${i}`, deliver: false, wakeMode: 'next-heartbeat' }]
        : pick === 2 ? [`${hooks}/ci`, { n: i, status: 'green' }]
        : [`${hooks}/task`, { n: i }];
    };
    const answeredId = new Map<number, string>();
    let replays = 0;
    let answered = 0;
    /** One try of request i; true when it was answered (then its id is recorded). */
    const send = async (i: number, hooks: string): Promise<boolean> => {
      const [url, json, chat] = request(i, hooks);
      unanswered.set(i, [url, json]);
      const body = JSON.stringify(json);
      const r = url.endsWith('/ci')
        ? await call(url, { raw: body, headers: { 'Idempotency-Key': `req-${i}`, 'x-hub-signature-256': githubSignature(body) } })
        : await call(url, { token: TOKEN, raw: body, headers: { 'Idempotency-Key': `req-${i}` } });
      if (r.status >= 500) return false;
      const id = r.status === 200 ? r.data?.eventId : r.status === 202 ? r.data?.runId : undefined;
      if (!id) throw new Error(`unexpected ${r.status}: ${r.text}`);
      if (r.status === 200) events.add(id);
      else runs.add(id);
      if (chat && r.status === 202) delivering.set(id, chat);
      if (r.headers.get('idempotent-replayed') === 'true') replays++;
      const before = answeredId.get(i);
      if (before !== undefined && before !== id) throw new Error(`key req-${i} answered ${before}, then ${id}`);
      answeredId.set(i, id);
      answered++;
      unanswered.delete(i);
      return true;
    };

    for (let round = 0; round < ROUNDS; round++) {
      gw = await startGateway(config, { dir });
      const g = gw;
      let alive = true;
      const retries = [...unanswered.keys()];
      const worker = async () => {
        while (alive) {
          const i = retries.length > 0 ? retries.shift()! : n++;
          try {
            await send(i, g.hooks);
          } catch (e) {
            if (alive && !String((e as Error).message).includes('fetch failed')) throw e;
            if (!alive) return;
          }
        }
      };
      const workers = Array.from({ length: WORKERS }, worker);
      // A kill after a count of answers, not a time: runs are queued and in flight on any machine.
      const enough = answered + 30 + round * 10;
      await until(`${enough - answered} answers before kill ${round + 1}`, () => answered >= enough, 30_000, 10);
      await g.kill();
      alive = false;
      await Promise.allSettled(workers);
    }

    // A last start: recovery runs, queued runs finish, with a quick model and more runners.
    model.rules.splice(0, model.rules.length, { match: 'deliver', reply: `${PART1}\n${PART2}` }, { match: '', reply: 'done' });
    gw = await startGateway({ ...config, agent: { ...config.agent, maxConcurrent: 32 } }, { dir });
    const g = gw;
    // The senders' last retries: every request is answered now.
    for (const i of [...unanswered.keys()]) expect(await send(i, g.hooks), `retry of req-${i}`).to.equal(true);
    expect(unanswered.size).to.equal(0);
    expect(answeredId.size, 'every request answered once retried').to.equal(n);
    expect(events.size + runs.size, 'each key answered with one id').to.equal(n);
    expect(events.size, 'acknowledged events').to.be.greaterThan(50);
    expect(runs.size, 'acknowledged runs').to.be.greaterThan(50);

    const listed = new Map<string, number>();
    const summaryCount = new Map<string, number>();
    const summarySources = new Set<string>();
    for (let after = 0; ;) {
      const r = await call(`${g.hooks}/events?after=${after}&limit=1000`, { token: ADMIN_TOKEN });
      const page: { seq: number; id: string; source: string }[] = r.data.events;
      if (page.length === 0) break;
      for (const e of page) {
        listed.set(e.id, (listed.get(e.id) ?? 0) + 1);
        if (e.source.startsWith('run:') || e.source === 'heartbeat') summarySources.add(e.id);
        if (e.source.startsWith('run:')) summaryCount.set(e.source.slice(4), (summaryCount.get(e.source.slice(4)) ?? 0) + 1);
      }
      after = page[page.length - 1].seq;
    }
    // Exactly once per key: no request events beyond the answered ones (a cut-off try that was
    // committed and then retried did not act twice).
    const requestEvents = [...listed.keys()].filter((id) => !summarySources.has(id));
    expect(requestEvents.length, 'request events stored').to.equal(events.size);
    const missing = [...events].filter((id) => !listed.has(id));
    expect(missing, 'acknowledged events missing after the kills').to.deep.equal([]);
    expect([...listed.values()].every((c) => c === 1), 'an event listed twice').to.equal(true);

    const final = new Map<string, { status: string; error?: string; delivery?: { status: string } }>();
    let waiting = '';
    await until(() => `every acknowledged run to end (run ${waiting})`, async () => {
      for (const id of runs) {
        if (final.has(id)) continue;
        const r = await call(`${g.hooks}/runs/${id}`, { token: ADMIN_TOKEN });
        expect(r.status, `run ${id} acknowledged but not found`).to.equal(200);
        if (['queued', 'running'].includes(r.data.run.status) || r.data.run.delivery?.status === 'pending') {
          waiting = `${id} still ${r.data.run.status}`;
          return false;
        }
        final.set(id, r.data.run);
      }
      return true;
    }, 90_000, 100);
    const interrupted = [...final.values()].filter((r) => r.status === 'failed');
    expect(interrupted.length, 'runs cut off by a kill').to.be.greaterThan(0);
    for (const r of interrupted) expect(r.error).to.match(/interrupted/);
    for (const r of final.values()) expect(['succeeded', 'failed']).to.include(r.status);

    // Deliveries: every run that succeeded with a reply to deliver got it delivered, each part
    // at least once and in order; a part arrives twice only when a kill cut its acknowledgement.
    const delivered = [...delivering].filter(([id]) => final.get(id)!.status === 'succeeded');
    expect(delivered.length, 'delivering runs that succeeded').to.be.greaterThan(5);
    let duplicates = 0;
    for (const [id, chat] of delivered) {
      expect(final.get(id)!.delivery, `run ${id}`).to.include({ status: 'delivered' });
      const got = accepted.get(chat) ?? [];
      const collapsed = got.filter((p, i) => p !== got[i - 1]);
      expect(collapsed, `parts of run ${id} (${got.join('')})`).to.deep.equal(['a', 'b']);
      duplicates += got.length - 2;
    }
    expect(duplicates, 'parts sent again after a kill').to.be.at.most(ROUNDS * 16);

    // Every run ended by recovery or by the runner posted its summary once (re-read: runs ended meanwhile).
    summaryCount.clear();
    for (let after = 0; ;) {
      const r = await call(`${g.hooks}/events?after=${after}&limit=1000`, { token: ADMIN_TOKEN });
      const page: { seq: number; source: string }[] = r.data.events;
      if (page.length === 0) break;
      for (const e of page) if (e.source.startsWith('run:')) summaryCount.set(e.source.slice(4), (summaryCount.get(e.source.slice(4)) ?? 0) + 1);
      after = page[page.length - 1].seq;
    }
    const badSummaries = [...runs].filter((id) => summaryCount.get(id) !== 1);
    expect(badSummaries, 'runs without exactly one summary').to.deep.equal([]);
    // And no run beyond the answered ones: every summary belongs to an answered run.
    expect([...summaryCount.keys()].filter((id) => !runs.has(id)), 'runs acted on without an answered key').to.deep.equal([]);
    console.log(`      crash: ${n} keyed requests, ${replays} retries answered as replays`);
  });
});
