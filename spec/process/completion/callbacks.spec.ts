import fs from 'node:fs';
import { expect } from 'chai';
import { call, runOf, startGateway, until, waitRun, withAdminToken, type Gateway } from '../../support/gateway.js';
import { CALLBACK_TOKEN, callbackWorld } from '../../support/callback-receiver.js';

/**
 * Run callbacks (CONTRACT.md §14, docs/callbacks.md) across a SIGKILL, a reload and a restart of
 * the real bin: retried like a delivery, never sent again once acknowledged, and the callback
 * URL checked again at each attempt.
 */
describe('http: run callbacks', function () {
  this.timeout(60_000);
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.kill();
    gw = undefined;
  });
  const world = callbackWorld();

  it('answers 500 once (Retry-After), is killed with SIGKILL while the callback is pending, and after the restart the receiver acknowledges exactly one', async () => {
    const { dir, config: cfg } = await world.config();
    world.receiver.answer = () => (world.receiver.hits.length === 0 ? { status: 500, headers: { 'retry-after': '4' } } : { status: 200 });
    gw = await startGateway(cfg, { dir });
    const r = await call(`${gw.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'report', deliver: false, callbackUrl: world.receiver.url } });
    expect(r.status).to.equal(202);
    const runId = r.data.runId as string;
    const pending = await waitRun(gw, runId, (run) => run.callback?.attempts >= 1 && !!run.callback?.error, 'a refused callback attempt');
    expect(pending.status).to.equal('succeeded');
    expect(pending.callback).to.deep.equal({ status: 'pending', attempts: 1, error: 'callback: HTTP 500' });
    expect(pending).not.to.have.property('callbackUrl');
    expect(world.receiver.hits).to.have.length(1);
    await gw.kill();

    gw = await startGateway(cfg, { dir });
    const done = await waitRun(gw, runId, (run) => run.callback?.status === 'delivered', 'the callback acknowledged');
    expect(done.callback).to.deep.equal({ status: 'delivered', attempts: 2 });
    expect(world.receiver.hits.map((h) => h.verified), 'every attempt carries a valid Standard Webhooks signature').to.deep.equal([true, true]);
    expect(world.receiver.hits.map((h) => h.id), 'the same webhook-id on every attempt').to.deep.equal([runId, runId]);
    expect(world.receiver.hits[1]!.payload).to.deep.equal({ runId, sessionKey: r.data.sessionKey, status: 'succeeded', reply: 'the answer' });
    expect(world.receiver.acknowledged()).to.have.length(1);
    // Once acknowledged, never again: not after another restart either.
    expect(await gw.stop()).to.equal(0);
    gw = await startGateway(cfg, { dir });
    await runOf(gw, runId);
    expect(world.receiver.hits).to.have.length(2);
  });

  describe('hooks.callbackHosts is checked again at each attempt: a callback accepted before the list was narrowed is not sent', () => {
    const NARROWED = ['hooks.example.com'];
    const REFUSED = /^callback: the URL has a host that hooks\.callbackHosts does not allow \(127\.0\.0\.1\)/;

    it('narrowed by a reload while the run is in flight: the callback fails at once, naming the setting, and the receiver gets nothing', async () => {
      let release!: () => void;
      world.model.rules.unshift({ match: 'held', held: new Promise<void>((r) => { release = r; }) });
      const { dir, config: cfg } = await world.config({ callbackHosts: ['127.0.0.1'] });
      gw = await startGateway(cfg, { dir });
      const r = await call(`${gw.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'held', deliver: false, callbackUrl: world.receiver.url } });
      expect(r.status, JSON.stringify(r.data)).to.equal(202);
      await world.model.waitForRequests(1);
      // As an editor saves: a copy renamed over the file, which the gateway's watch reloads.
      const narrowed = withAdminToken({ ...cfg, hooks: { ...cfg.hooks, callbackHosts: NARROWED } });
      fs.writeFileSync(`${gw.configFile}.tmp`, JSON.stringify(narrowed));
      fs.renameSync(`${gw.configFile}.tmp`, gw.configFile);
      await until(() => `the reload:\n${gw!.output().slice(-2000)}`, () => gw!.output().includes('config reloaded'));
      release();
      const run = await waitRun(gw, r.data.runId, (x) => x.callback?.status === 'failed', 'the callback refused');
      expect(run.status).to.equal('succeeded');
      expect(run.callback.error).to.match(REFUSED);
      expect(world.receiver.hits).to.have.length(0);
    });

    it('narrowed across a restart on the same data directory: the pending callback is not retried, and fails naming the setting', async () => {
      const { dir, config: cfg } = await world.config({ callbackHosts: ['127.0.0.1'] });
      gw = await startGateway(cfg, { dir });
      const first = gw;
      // The first attempt is refused for now (retry in 1 s), and the gateway is stopped while it
      // is under way: the callback is left pending in the store.
      world.receiver.answer = () => {
        first.proc.kill('SIGTERM');
        return { status: 503, headers: { 'retry-after': '1' } };
      };
      const r = await call(`${gw.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'report', deliver: false, callbackUrl: world.receiver.url } });
      expect(r.status, JSON.stringify(r.data)).to.equal(202);
      await until('the gateway to stop after the first attempt', () => first.proc.exitCode !== null);
      expect(first.proc.exitCode, first.output().slice(-2000)).to.equal(0);
      expect(world.receiver.hits).to.have.length(1);

      gw = await startGateway({ ...cfg, hooks: { ...cfg.hooks, callbackHosts: NARROWED } }, { dir });
      const run = await waitRun(gw, r.data.runId, (x) => x.callback?.status === 'failed', 'the callback refused');
      expect(run.callback.error).to.match(REFUSED);
      expect(world.receiver.hits, 'no attempt after the list was narrowed').to.have.length(1);
    });
  });
});
