import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startFakeProvider, textOf, type FakeProvider } from '../../support/fake-providers.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, runOf, startGateway, tmpDir, until, waitRun, type Gateway } from '../../support/gateway.js';

/**
 * Pending deliveries survive the process (CONTRACT.md §9): the real bin, killed (SIGKILL) or
 * stopped (SIGTERM) while a reply waits in the outbox, resumes it after a restart on the same
 * data directory, and the fake provider ends up with every part exactly once.
 */
describe('http: pending deliveries resume after a restart (real bin)', function () {
  this.timeout(60_000);
  const TOKEN = 'outbox-restart-token-0123';
  // Two Telegram parts (limit 4096): the first line block, then the rest.
  const REPLY = `${'first part '.repeat(300).trim()}\n${'second part '.repeat(100).trim()}`;
  let model: FakeModel;
  let fake: FakeProvider;
  let gw: Gateway | undefined;
  /** Texts the fake accepted (answered 2xx), in order. */
  let accepted: string[];
  let mode: 'up' | 'part2-down' | 'slow-once';

  beforeEach(async () => {
    model = await startFakeModel([{ reply: REPLY }]);
    fake = await startFakeProvider('telegram');
    accepted = [];
    mode = 'up';
    let slowed = false;
    fake.respond = (c) => {
      if (c.kind !== 'send') return undefined;
      const text = textOf('telegram', c.body);
      if (mode === 'part2-down' && text.startsWith('second')) return fake.error(503, 'Service Unavailable');
      if (mode === 'slow-once' && !slowed) {
        slowed = true;
        // The client gives up (SIGTERM's grace) before this answer: nothing is accepted.
        return { status: 200, body: { ok: true, result: { message_id: 1 } }, delayMs: 20_000 };
      }
      accepted.push(text);
      return undefined;
    };
  });
  afterEach(async () => {
    await gw?.kill();
    gw = undefined;
    await fake.close();
    await model.close();
  });

  async function setup() {
    const dir = tmpDir('hookrelay-outbox-restart-');
    const config = {
      server: { host: '127.0.0.1', port: await freePort() },
      dataDir: `${dir}/data`,
      hooks: { token: TOKEN },
      agent: { baseUrl: model.baseUrl, model: 'fake' },
      heartbeat: { everySeconds: 3600 },
      session: { provider: 'telegram', to: fake.to },
      providers: { telegram: fake.config },
    };
    return { dir, config };
  }


  async function expectDeliveredOnce(g: Gateway, runId: string) {
    const run = await waitRun(g, runId, (r) => r.delivery?.status === 'delivered', 'delivered');
    expect(run.deliveredTo).to.equal(`telegram:${fake.to}`);
    const parts = REPLY.split('\n');
    expect(accepted, 'each part accepted exactly once, in order').to.deep.equal(parts);
    const events = (await call(`${g.hooks}/events?after=0&limit=100`, { token: ADMIN_TOKEN })).data.events as { source: string; text: string }[];
    const summaries = events.filter((e) => e.source === `run:${runId}`);
    expect(summaries).to.have.length(1);
    expect(summaries[0]!.text).to.include(`Delivered to telegram:${fake.to}`);
  }

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`an outage across a ${signal} and restart: part 1 is not sent again, part 2 goes out once the provider is back`, async () => {
      const { dir, config } = await setup();
      mode = 'part2-down';
      gw = await startGateway(config, { dir });
      const r = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'report', deliver: true } });
      expect(r.status).to.equal(202);
      const runId = r.data.runId as string;
      const pending = await waitRun(gw, runId, (run) => run.delivery?.attempts >= 1 && !!run.delivery?.error, 'a failed attempt');
      expect(pending.delivery).to.include({ status: 'pending', target: `telegram:${fake.to}` });
      expect(accepted).to.deep.equal([REPLY.split('\n')[0]]);
      if (signal === 'SIGKILL') await gw.kill();
      else expect(await gw.stop(), 'exit code after SIGTERM').to.equal(0);

      mode = 'up';
      gw = await startGateway(config, { dir });
      await expectDeliveredOnce(gw, runId);
      // `hookrelay runs` (read-only, beside the server) tells the same story.
      const { stdout } = await promisify(execFile)(BIN, ['runs', '--config', `${dir}/hookrelay.json`], { cwd: ROOT });
      expect(stdout).to.match(new RegExp(`^${runId} +succeeded .* delivered telegram:${fake.to} \\([23] attempts\\) +-$`, 'm'));
    });
  }

  it('SIGTERM while a part is in flight: after the grace it is left pending, and sent after the restart', async () => {
    const { dir, config } = await setup();
    mode = 'slow-once';
    gw = await startGateway(config, { dir });
    const r = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'report', deliver: true } });
    const runId = r.data.runId as string;
    await fake.waitForMessages(1, 10_000);
    const stopped = Date.now();
    expect(await gw.stop()).to.equal(0);
    expect(Date.now() - stopped, 'stopped after the grace, not after the provider').to.be.below(15_000);
    expect(accepted).to.deep.equal([]);

    mode = 'up';
    gw = await startGateway(config, { dir });
    await expectDeliveredOnce(gw, runId);
  });
});
