import { expect } from 'chai';
import { PROVIDERS } from '../../../src/config/schema.js';
import type { Provider } from '../../../src/config/types.js';
import { PROVIDER_DESCRIPTORS } from '../../../src/dispatch/providers/index.js';
import { startFakeProvider, textOf, type FakeAnswer, type FakeProvider, type ProviderCall } from '../../support/fake-providers.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { ADMIN_TOKEN, startInProcess, storeRows, TOKEN, type InProcess } from '../../support/in-process.js';
import { until } from '../../support/gateway.js';

/**
 * The delivery outbox end to end (CONTRACT.md §9), for every provider: the real app, its
 * SQLite store and listener, the fake model, and a local fake of the provider's API that
 * answers each scenario as that provider would. One gateway serves every provider, and each
 * describe sends all its scenarios in its `before`, so that their retry waits (real time: the
 * listener's runtime keeps the real clock) overlap; each test then awaits its own.
 */

const auth = { authorization: `Bearer ${TOKEN}` };
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

async function getRun(gw: InProcess, runId: string): Promise<any> {
  const res = await fetch(`${gw.hooks}/runs/${runId}`, { headers: admin });
  return ((await res.json()) as { run: any }).run;
}

/** The run once its delivery has settled. */
const settled = (gw: InProcess, runId: string) =>
  until(`run ${runId} delivery settled`, async () => {
    const run = await getRun(gw, runId);
    return run.delivery && run.delivery.status !== 'pending' ? run : undefined;
  });

async function summariesOf(gw: InProcess, runId: string): Promise<string[]> {
  const res = await fetch(`${gw.hooks}/events?after=0&limit=1000`, { headers: admin });
  const { events } = (await res.json()) as { events: { kind: string; source: string; text: string }[] };
  return events.filter((e) => e.kind === 'summary' && e.source === `run:${runId}`).map((e) => e.text);
}

/** A reply of about 2.5 × the provider's limit, in lines, so that it splits into 3 parts. */
function longReply(limit: number): string {
  return Array.from({ length: Math.ceil((limit * 2.5) / 50) }, (_, i) => `L${String(i).padStart(4, '0')} `.padEnd(49, '.')).join('\n');
}

describe('http: the delivery outbox, for every provider (real listener and store, fake provider APIs)', function () {
  this.timeout(30_000);
  let model: FakeModel;
  let gw: InProcess;
  const fakes = new Map<Provider, FakeProvider>();
  /** Per provider: what its fake accepted, the parts of the long reply in order, tries and their times per text. */
  const accepted = new Map<Provider, string[]>();
  const longParts = new Map<Provider, string[]>();
  const seen = new Map<Provider, Map<string, number>>();
  const times = new Map<Provider, Map<string, number[]>>();
  /** Per provider and scenario: the run id, and for the 429 the run and its summaries between the attempts. */
  const runs = new Map<string, Promise<string>>();
  const between = new Map<Provider, Promise<{ run: any; summaries: string[]; nextAt: string }>>();
  /** The cases that need settings of their own: each its own gateway over a fake, and the request it was sent. */
  interface Own { own: InProcess; fake: FakeProvider; accepted: Promise<{ status: number; body: any }> }
  const closing: (() => Promise<void>)[] = [];
  async function own(provider: Provider, raw: (fake: FakeProvider) => Record<string, any>, respond: (fake: FakeProvider) => FakeProvider['respond'], send: (own: InProcess, fake: FakeProvider) => Promise<{ status: number; body: any }>): Promise<Own> {
    const fake = await startFakeProvider(provider);
    fake.respond = respond(fake);
    const gateway = await startInProcess({ agent: { baseUrl: model.baseUrl }, providers: { [provider]: fake.config }, ...raw(fake) });
    closing.push(() => gateway.stop(), () => fake.close());
    const accepted = send(gateway, fake);
    accepted.catch(() => {});
    return { own: gateway, fake, accepted };
  }
  let slow: Promise<Own>;
  let down: Promise<Own>;
  let heartbeat: Promise<Own>;

  before(async () => {
    model = await startFakeModel([
      { match: 'case-429', reply: 'R429 rate limited first' },
      { match: 'case-5xx', reply: 'R5XX server error first' },
      { match: 'case-4xx', reply: 'R4XX refused for good' },
      ...PROVIDER_DESCRIPTORS.map((p) => ({ match: `case-long-${p.name}`, reply: longReply(p.limit) })),
    ]);
    for (const name of PROVIDERS) {
      const fake = await startFakeProvider(name);
      fakes.set(name, fake);
      accepted.set(name, []);
      longParts.set(name, []);
      seen.set(name, new Map());
      times.set(name, new Map());
      // Each scenario is told apart by the text it sends; `seen` counts tries per text.
      fake.respond = (c: ProviderCall): FakeAnswer | undefined => {
        if (c.kind !== 'send') return undefined;
        const text = textOf(name, c.body);
        const tries = seen.get(name)!;
        const n = (tries.get(text) ?? 0) + 1;
        tries.set(text, n);
        times.get(name)!.set(text, [...(times.get(name)!.get(text) ?? []), Date.now()]);
        const parts = longParts.get(name)!;
        let answer: FakeAnswer | undefined;
        if (text.startsWith('R429') && n === 1) answer = fake.error(429, 'Too Many Requests', 2);
        else if (text.startsWith('R5XX') && n === 1) answer = fake.error(503, 'Service Unavailable');
        else if (text.startsWith('R4XX')) answer = fake.error(400, 'recipient not found');
        else if (text.startsWith('L')) {
          if (n === 1) parts.push(text);
          if (parts.indexOf(text) === 1 && n === 1) answer = fake.error(502, 'Bad Gateway');
        }
        if (!answer) accepted.get(name)!.push(text);
        return answer;
      };
    }
    gw = await startInProcess({ agent: { baseUrl: model.baseUrl }, providers: Object.fromEntries([...fakes].map(([name, fake]) => [name, fake.config])) });
    for (const name of PROVIDERS) {
      const agent = async (message: string) => {
        const r = await post(`${gw.hooks}/agent`, { message, deliver: true, provider: name, to: fakes.get(name)!.to, wakeMode: 'next-heartbeat' });
        expect(r.status).to.equal(202);
        return r.body.runId as string;
      };
      for (const scenario of ['case-429', 'case-5xx', 'case-4xx', `case-long-${name}`]) runs.set(`${name} ${scenario}`, agent(scenario));
      // Seen while the Retry-After is waited out: the first attempt's error, with no summary yet.
      between.set(name, runs.get(`${name} case-429`)!.then((runId) => until(`run ${runId}: the first attempt to fail`, async () => {
        const run = await getRun(gw, runId);
        if (!run.delivery?.error) return undefined;
        const [row] = storeRows<{ next_at: string }>(gw, `SELECT next_at FROM outbox WHERE run_id = '${runId}'`);
        return { run, summaries: await summariesOf(gw, runId), nextAt: row!.next_at };
      }, 10_000, 20)));
    }
    const reply = (o: InProcess, fake: FakeProvider) => post(`${o.hooks}/agent`, { message: 'case-5xx', provider: 'slack', to: fake.to });
    let n = 0;
    slow = own('slack', () => ({ delivery: { timeoutSeconds: 1 } }), () => (c) => (c.kind === 'send' && n++ === 0 ? { status: 200, body: { ok: true }, delayMs: 5000 } : undefined), reply);
    down = own('slack', () => ({ delivery: { maxAttempts: 2 } }), (fake) => (c) => (c.kind === 'send' ? fake.error(503, 'Service Unavailable') : undefined), reply);
    let m = 0;
    heartbeat = startFakeModel([{ reply: 'Heads up: the deploy failed.' }]).then((hbModel) => {
      closing.push(() => hbModel.close());
      return own('telegram', (fake) => ({ agent: { baseUrl: hbModel.baseUrl }, session: { provider: 'telegram', to: fake.to } }),
        (fake) => (c) => (c.kind === 'send' && m++ === 0 ? fake.error(500, 'Internal Server Error') : undefined),
        (o) => post(`${o.hooks}/wake`, { text: 'deploy failed', mode: 'now' }));
    });
    // An unhandled rejection must not end the run before the test that awaits it says why.
    for (const p of [...runs.values(), ...between.values(), slow, down, heartbeat]) p.catch(() => {});
  });
  after(async () => {
    await gw?.stop();
    for (const fake of fakes.values()) await fake.close();
    for (const close of closing) await close();
    await model?.close();
  });

  for (const name of PROVIDERS) {
    describe(name, () => {
      const target = () => `${name}:${fakes.get(name)!.to}`;
      const runOf = (scenario: string) => runs.get(`${name} ${scenario}`)!;

      it('429 with Retry-After: waits it out in full (longer than the back-off), then delivered; the summary is posted only once it has settled', async () => {
        const runId = await runOf('case-429');
        // Between the attempts: the run has ended, its delivery is pending, no summary yet.
        const { run: waiting, summaries: before, nextAt } = await between.get(name)!;
        expect(waiting.status).to.equal('succeeded');
        expect(waiting.delivery).to.deep.include({ status: 'pending', target: target(), attempts: 1 });
        expect(waiting.delivery.error).to.match(/Too Many Requests/);
        expect(waiting.deliveredTo).to.equal(undefined);
        expect(before).to.deep.equal([]);

        const run = await settled(gw, runId);
        expect(run).to.deep.include({ status: 'succeeded', deliveredTo: target(), delivery: { status: 'delivered', target: target(), attempts: 2 } });
        expect(seen.get(name)!.get('R429 rate limited first')).to.equal(2);
        const [first, second] = times.get(name)!.get('R429 rate limited first')!;
        expect(Date.parse(nextAt) - first!, 'the retry is scheduled Retry-After: 2 after the attempt, though the first back-off is 1–1.2 s').to.be.at.least(2000);
        expect(second! - first!, 'Retry-After: 2 waited out').to.be.at.least(1950);
        const summaries = await summariesOf(gw, runId);
        expect(summaries).to.have.length(1);
        expect(summaries[0]).to.include(`Delivered to ${target()}`);
      });

      it('a 5xx, then delivered on the retry', async () => {
        const run = await settled(gw, await runOf('case-5xx'));
        expect(run).to.deep.include({ deliveredTo: target(), delivery: { status: 'delivered', target: target(), attempts: 2 } });
        expect(seen.get(name)!.get('R5XX server error first')).to.equal(2);
        expect(accepted.get(name)!.filter((t) => t.startsWith('R5XX'))).to.have.length(1);
      });

      it('a permanent 4xx fails at once, recorded with the provider\'s reason; the summary says delivery failed and names the target', async () => {
        const runId = await runOf('case-4xx');
        const run = await settled(gw, runId);
        expect(run.status).to.equal('succeeded');
        expect(run.deliveredTo).to.equal(undefined);
        expect(run.errorCode).to.equal('delivery_failed');
        expect(run.delivery).to.include({ status: 'failed', target: target(), attempts: 1 });
        expect(run.delivery.error).to.match(/recipient not found/);
        expect(run.error).to.equal(`delivery failed: ${run.delivery.error}`);
        expect(seen.get(name)!.get('R4XX refused for good')).to.equal(1);
        const summaries = await summariesOf(gw, runId);
        expect(summaries).to.have.length(1);
        expect(summaries[0]).to.include(`Delivery to ${target()} failed`).and.include('recipient not found');
      });

      it('a long reply is split in order; a failure on part 2 is retried without sending part 1 again', async () => {
        const limit = PROVIDER_DESCRIPTORS.find((p) => p.name === name)!.limit;
        const reply = longReply(limit);
        const run = await settled(gw, await runOf(`case-long-${name}`));
        expect(run.delivery).to.deep.equal({ status: 'delivered', target: target(), attempts: 2 });
        const parts = accepted.get(name)!.filter((t) => t.startsWith('L'));
        expect(parts).to.have.length(3);
        expect(parts.every((p) => p.length <= limit)).to.equal(true);
        expect(parts.join('\n')).to.equal(reply);
        expect(seen.get(name)!.get(parts[0]!), 'part 1: sent once').to.equal(1);
        expect(seen.get(name)!.get(parts[1]!), 'part 2: failed, then sent').to.equal(2);
      });
    });
  }

  describe('time-outs and giving up', () => {
    it('a provider that does not answer within delivery.timeoutSeconds is retried', async () => {
      const { own, fake, accepted } = await slow;
      const run = await settled(own, (await accepted).body.runId);
      expect(run.delivery).to.deep.equal({ status: 'delivered', target: `slack:${fake.to}`, attempts: 2 });
      expect(fake.messages).to.have.length(2);
    });

    it('gives up after delivery.maxAttempts, saying so', async () => {
      const { own, fake, accepted } = await down;
      const run = await settled(own, (await accepted).body.runId);
      expect(run.delivery).to.include({ status: 'failed', attempts: 2 });
      expect(run.delivery.error).to.match(/Service Unavailable \(gave up after 2 attempts\)$/);
      expect(run.errorCode).to.equal('delivery_failed');
      expect(fake.messages).to.have.length(2);
    });
  });

  describe('heartbeat replies', () => {
    it('go through the outbox to the last recipient, retried after a 5xx, sent once', async () => {
      const { own, fake, accepted } = await heartbeat;
      expect((await accepted).status).to.equal(200);
      // Settled as delivered: a settled row is never claimed again, so nothing more is sent.
      const rows = () => storeRows<{ status: string; attempts: number }>(own, "SELECT status, attempts FROM outbox WHERE kind = 'heartbeat'");
      await until('the heartbeat reply to be delivered', () => rows()[0]?.status === 'delivered');
      expect(rows()).to.deep.equal([{ status: 'delivered', attempts: 2 }]);
      expect(fake.texts).to.deep.equal(['Heads up: the deploy failed.', 'Heads up: the deploy failed.']);
      expect(fake.messages, 'nothing sent after the acknowledgement').to.have.length(2);
    });
  });
});
