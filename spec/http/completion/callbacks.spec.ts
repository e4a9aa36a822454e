import fs from 'node:fs';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { ADMIN_TOKEN, call, freePort, tmpDir, waitRun } from '../../support/gateway.js';
import { startInProcess, type InProcess } from '../../support/in-process.js';
import { CALLBACK_TOKEN, callbackWorld, startCallbackReceiver } from '../../support/callback-receiver.js';

/**
 * Run callbacks (CONTRACT.md §14, docs/callbacks.md) on the real app in this process: the outcome
 * POSTed through the durable outbox, signed as Standard Webhooks, and the callback URL checked
 * before anything is accepted (spec/process/completion/: across a SIGKILL, a reload, a restart).
 */
describe('http: run callbacks', function () {
  this.timeout(60_000);
  let app: InProcess | undefined;
  afterEach(async () => {
    await app?.stop();
    app = undefined;
  });
  const world = callbackWorld();


  it('reports a failed run with its error and errorCode; a 4xx fails the callback at once', async () => {
    const { dir, config: cfg } = await world.config();
    world.receiver.answer = () => ({ status: 410 });
    const gw = app = await startInProcess(cfg, dir);
    const r = await call(`${gw.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'fail me', deliver: false, callbackUrl: world.receiver.url } });
    const run = await waitRun(gw, r.data.runId, (x) => x.callback?.status === 'failed', 'the callback failed');
    expect(run.status).to.equal('failed');
    expect(run.callback).to.deep.equal({ status: 'failed', attempts: 1, error: 'callback: HTTP 410' });
    expect(world.receiver.hits).to.have.length(1);
    expect(world.receiver.hits[0]!.payload).to.include({ runId: r.data.runId, status: 'failed', errorCode: 'model_http' });
    expect(world.receiver.hits[0]!.payload).to.have.property('error').that.is.a('string');
  });

  it('a redirect is not followed: the 3xx fails the callback, and its Location is never called', async () => {
    const elsewhere = await startCallbackReceiver(world.secret);
    try {
      const { dir, config: cfg } = await world.config();
      world.receiver.answer = () => ({ status: 302, headers: { location: elsewhere.url } });
      const gw = app = await startInProcess(cfg, dir);
      const r = await call(`${gw.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'hi', deliver: false, callbackUrl: world.receiver.url } });
      const run = await waitRun(gw, r.data.runId, (x) => x.callback?.status === 'failed', 'the callback failed');
      expect(run.callback).to.deep.equal({ status: 'failed', attempts: 1, error: 'callback: HTTP 302' });
      expect(elsewhere.hits).to.have.length(0);
    } finally {
      await elsewhere.close();
    }
  });

  it("a mapping's callback reports each of its runs", async () => {
    const { dir, config: cfg } = await world.config({
      mappings: [{ id: 'ci', match: { path: 'ci' }, action: 'agent', messageTemplate: 'build {{n}}', callback: { url: world.receiver.url } }],
    });
    const gw = app = await startInProcess(cfg, dir);
    const r = await call(`${gw.hooks}/ci`, { token: CALLBACK_TOKEN, json: { n: 7 } });
    expect(r.status).to.equal(202);
    await waitRun(gw, r.data.runId, (x) => x.callback?.status === 'delivered', 'the callback acknowledged');
    expect(world.receiver.acknowledged().map((h) => h.payload)).to.deep.equal([{ runId: r.data.runId, sessionKey: r.data.sessionKey, status: 'succeeded', reply: 'the answer' }]);
  });

  describe('a callback URL is checked before anything is accepted', () => {
    let checked: InProcess;
    let quiet: FakeModel;
    before(async () => {
      quiet = await startFakeModel();
      const dir = tmpDir('hookrelay-callback-hosts-');
      checked = await startInProcess({
        server: { host: '127.0.0.1', port: await freePort() },
        dataDir: `${dir}/data`,
        hooks: { token: CALLBACK_TOKEN, callbackSecret: world.secret, callbackHosts: ['hooks.example.com', '*.receivers.example', '127.0.0.0/8'] },
        agent: { baseUrl: quiet.baseUrl, model: 'fake' },
        heartbeat: { everySeconds: 3600 },
      }, dir);
    });
    after(async () => {
      await checked.stop();
      await quiet.close();
    });

    const refused = async (callbackUrl: unknown, says: RegExp) => {
      const r = await call(`${checked.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'hi', callbackUrl } });
      expect(r.status, JSON.stringify(r.data)).to.equal(400);
      expect(r.data.error.code).to.equal('invalid_payload');
      expect(r.data.error.message).to.match(says);
      const runs = (await call(`${checked.hooks}/runs?limit=10`, { token: ADMIN_TOKEN })).data.runs;
      expect(runs, 'nothing accepted').to.have.length(0);
    };

    it('a host hooks.callbackHosts does not list: 400 naming the setting', () => refused('http://10.0.0.1/cb', /callbackUrl has a host that hooks\.callbackHosts does not allow/));
    it('a name that only ends like an allowed one: 400', () => refused('https://evilhooks.example.com/cb', /hooks\.callbackHosts/));
    it('*.domain does not cover the domain itself: 400', () => refused('https://receivers.example/cb', /hooks\.callbackHosts/));
    it('a non-http(s) scheme: 400', () => refused('file:///etc/passwd', /callbackUrl must be an http:\/\/ or https:\/\/ URL/));
    it('credentials in the URL: 400', () => refused('https://user:pw@hooks.example.com/cb', /must not carry credentials/));
    it('not a URL: 400', () => refused('hooks.example.com/cb', /must be an absolute http/));
    it('not a string: 400', () => refused(42, /callbackUrl must be a string/));
    it('hosts on the list are accepted: a name, a name below *.domain, an address in a range', async () => {
      for (const url of ['https://hooks.example.com/cb', 'https://a.receivers.example/cb', 'http://127.0.0.1:9/cb']) {
        const r = await call(`${checked.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'hi', deliver: false, callbackUrl: url } });
        expect(r.status, url).to.equal(202);
      }
    });
  });

  it('without hooks.callbackSecret a callbackUrl is 400 invalid_payload', async () => {
    const { dir, config: cfg } = await world.config({ callbackSecret: '' });
    const gw = app = await startInProcess(cfg, dir);
    const r = await call(`${gw.hooks}/agent`, { token: CALLBACK_TOKEN, json: { message: 'hi', callbackUrl: world.receiver.url } });
    expect(r.status).to.equal(400);
    expect(r.data.error.code).to.equal('invalid_payload');
    expect(r.data.error.message).to.match(/hooks\.callbackSecret/);
  });

  it("without hooks.callbackSecret a mapping's callback is a config error naming its path", async () => {
    const { dir, config: cfg } = await world.config({
      callbackSecret: '',
      mappings: [{ id: 'ci', match: { path: 'ci' }, messageTemplate: 'x', callback: { url: 'ftp://x.example/' } }],
    });
    const file = `${dir}/hookrelay.json`;
    fs.writeFileSync(file, JSON.stringify(cfg));
    const out = await runCli(['check', '--config', file]);
    expect(out.code).to.equal(1);
    const text = `${out.stdout}${out.stderr}`;
    expect(text).to.include('hooks.mappings[0].callback: needs hooks.callbackSecret');
    expect(text).to.match(/hooks\.mappings\[0\]\.callback\.url: must be an http:\/\/ or https:\/\/ URL/);
  });
});
