import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, type ConfigProblem } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { ended, expectForwardHeaders, forwardRowsOf, startForward, waitRunOf } from '../../support/forward-mode.js';
import { call, sleep, tmpDir, until } from '../../support/gateway.js';
import { ADMIN_TOKEN, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Forward mode (CONTRACT.md §9, README "Forward mode"): the real app in-process, in front of a
 * fake upstream that speaks OpenClaw's hooks protocol. Every accepted action is committed with
 * its forward row and then sent upstream with the upstream's token and the action's id as
 * X-OpenClaw-Idempotency-Key; the run ends with the upstream's answer. No model is called.
 * The retries are in forward-retries.spec.ts.
 */
describe('http: forward mode (runtime.kind: forward)', function () {
  this.timeout(30_000);
  let upstream: FakeUpstream;
  let model: FakeModel;
  let app: InProcess | undefined;

  beforeEach(async () => {
    upstream = await startFakeUpstream();
    model = await startFakeModel([{ reply: 'the model must not be called in forward mode' }]);
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await upstream.close();
    await model.close();
  });

  async function start(extra: Record<string, any> = {}) {
    app = await startForward(upstream, model, extra);
    return app;
  }
  const waitRun = (runId: string, ok: (run: any) => boolean) => waitRunOf(app!, runId, ok);
  const forwardRows = () => forwardRowsOf(app!);

  it('forwards a wake to POST {url}/wake {text, mode} and an agent action to POST {url}/agent; the run ends with the upstream\'s answer', async () => {
    // A request that names its session: the upstream must allow request keys (README "Forward mode").
    upstream.settings.allowRequestSessionKey = true;
    upstream.settings.allowedSessionKeyPrefixes = ['hook:'];
    await start();
    const w = await call(`${app!.hooks}/wake`, { token: TOKEN, json: { text: '  build failed  ', mode: 'next-heartbeat' } });
    expect(w.status).to.equal(200);
    expect(w.data).to.deep.include({ ok: true, mode: 'next-heartbeat' });
    const a = await call(`${app!.hooks}/agent`, {
      token: TOKEN,
      json: { message: 'summarise', name: 'CI', sessionKey: 'hook:ci:1', wakeMode: 'next-heartbeat', deliver: true, channel: 'telegram', to: '555', thinking: 'low', timeoutSeconds: 60 },
    });
    expect(a.status).to.equal(202);
    const runId = a.data.runId as string;

    const calls = await upstream.waitForCalls(2);
    const wake = calls.find((c) => c.path === '/hooks/wake')!;
    const agent = calls.find((c) => c.path === '/hooks/agent')!;
    expectForwardHeaders(upstream, wake, w.data.eventId);
    expect(wake.body).to.deep.equal({ text: 'build failed', mode: 'next-heartbeat' });
    expectForwardHeaders(upstream, agent, runId);
    expect(agent.body).to.deep.equal({
      message: 'summarise', name: 'CI', sessionKey: 'hook:ci:1', wakeMode: 'next-heartbeat', deliver: true, channel: 'telegram', to: '555', thinking: 'low', timeoutSeconds: 60,
    });

    const run = await waitRun(runId, ended);
    const upstreamRunId = upstream.actions.find((x) => x.path === 'agent')!.runId;
    expect(run).to.include({ status: 'succeeded' });
    expect(run.forwarded).to.deep.equal({ status: 200, upstreamRunId });
    expect(run.endedAt).to.be.a('string');
    expect(run.delivery, 'a forward is not a reply delivery').to.equal(undefined);
    // The wake is stored as usual.
    const events = (await call(`${app!.hooks}/events?after=0`, { token: ADMIN_TOKEN })).data.events;
    expect(events.map((e: any) => [e.id, e.kind, e.text])).to.deep.equal([[w.data.eventId, 'wake', 'build failed']]);
    await sleep(300); // a heartbeat "at once" would have started by now
    expect(model.requests, 'no model call: the upstream runs the model and the heartbeat').to.have.length(0);
  });

  it('forwards only what the sender gave: the seed-default agent action (deliver, provider last, no sessionKey) succeeds against OpenClaw\'s default hooks settings', async () => {
    await start();
    const w = await call(`${app!.hooks}/wake`, { token: TOKEN, json: { text: 'ping' } });
    const a = await call(`${app!.hooks}/agent`, { token: TOKEN, json: { message: 'hi' } });
    const calls = await upstream.waitForCalls(2);
    expect(calls.find((c) => c.path === '/hooks/wake')!.body).to.deep.equal({ text: 'ping', mode: 'now' });
    // No generated sessionKey, no channel "last", no to, no default wakeMode: only the message
    // and whether to deliver (hookrelay's mappings default to false, OpenClaw to true).
    expect(calls.find((c) => c.path === '/hooks/agent')!.body).to.deep.equal({ message: 'hi', deliver: true });
    expect(w.status).to.equal(200);
    const run = await waitRun(a.data.runId, ended);
    expect(run.status, JSON.stringify(run)).to.equal('succeeded');
    await sleep(400);
    expect(model.requests).to.have.length(0);
  });

  it('provider last with a to: channel and to are both left out (OpenClaw refuses channel "last" with deliver)', async () => {
    await start();
    const a = await call(`${app!.hooks}/agent`, { token: TOKEN, json: { message: 'hi', provider: 'last', to: '555', deliver: true } });
    const run = await waitRun(a.data.runId, ended);
    expect(run.status, JSON.stringify(run)).to.equal('succeeded');
    expect(upstream.calls[0]!.body).to.deep.equal({ message: 'hi', deliver: true });
  });

  it('a sessionKey the request names is forwarded; OpenClaw\'s default refusal fails the run with forward_failed naming hooks.allowRequestSessionKey', async () => {
    await start();
    const a = await call(`${app!.hooks}/agent`, { token: TOKEN, json: { message: 'hi', sessionKey: 'hook:ci:7' } });
    expect(a.status).to.equal(202);
    const run = await waitRun(a.data.runId, ended);
    expect(upstream.calls[0]!.body).to.include({ sessionKey: 'hook:ci:7' });
    expect(run).to.include({ status: 'failed', errorCode: 'forward_failed' });
    expect(run.error).to.equal('forward failed: upstream: HTTP 400: sessionKey is disabled for externally supplied hook payload values; set hooks.allowRequestSessionKey=true to enable');
    expect(upstream.actions).to.have.length(0);
  });

  it('a sessionMode and an agentId the request gives are forwarded as given (OpenClaw\'s default is isolated, hookrelay\'s persistent)', async () => {
    await start();
    const a = await call(`${app!.hooks}/agent`, { token: TOKEN, json: { message: 'hi', sessionMode: 'isolated', agentId: 'main' } });
    expect((await waitRun(a.data.runId, ended)).status).to.equal('succeeded');
    expect(upstream.calls[0]!.body).to.deep.equal({ message: 'hi', agentId: 'main', deliver: true, sessionMode: 'isolated' });
  });

  it('a mapping\'s sessionKey is forwarded (and accepted once the upstream allows it); a mapping without one forwards none', async () => {
    upstream.settings.allowRequestSessionKey = true;
    upstream.settings.allowedSessionKeyPrefixes = ['hook:'];
    await start({ hooks: { defaultSessionKey: 'hook:inbox', mappings: [
      { id: 'gh', match: { path: 'gh' }, messageTemplate: 'push {{ref}}', sessionKey: 'hook:gh:{{ref}}' },
      { id: 'plain', match: { path: 'plain' }, messageTemplate: 'plain {{n}}' },
    ] } });
    const a = await call(`${app!.hooks}/gh`, { token: TOKEN, json: { ref: 'main' } });
    const b = await call(`${app!.hooks}/plain`, { token: TOKEN, json: { n: 1 } });
    expect(b.data.sessionKey, 'hookrelay\'s own default still names the local run').to.equal('hook:inbox');
    for (const r of [a, b]) expect((await waitRun(r.data.runId, ended)).status).to.equal('succeeded');
    const bodies = upstream.calls.map((c) => c.body);
    expect(bodies).to.deep.include({ message: 'push main', sessionKey: 'hook:gh:main', deliver: false });
    expect(bodies).to.deep.include({ message: 'plain 1', deliver: false });
  });

  it('a provider not configured here is not refused: the upstream delivers (local mode answers 400)', async () => {
    await start();
    const a = await call(`${app!.hooks}/agent`, { token: TOKEN, json: { message: 'hi', deliver: true, provider: 'slack', to: 'C0123' } });
    expect(a.status).to.equal(202);
    const [c] = await upstream.waitForCalls(1);
    expect(c!.body).to.include({ channel: 'slack', to: 'C0123', deliver: true });
  });

  it('a permanent 4xx fails the run at once with the upstream\'s reason (never its token) and errorCode forward_failed', async () => {
    await start();
    upstream.respond = () => ({ status: 400, body: { ok: false, error: `sessionKey not allowed (token ${upstream.token})` } });
    const a = await call(`${app!.hooks}/agent`, { token: TOKEN, json: { message: 'hi' } });
    const run = await waitRun(a.data.runId, ended);
    expect(run.status).to.equal('failed');
    expect(run.errorCode).to.equal('forward_failed');
    expect(run.error).to.equal('forward failed: upstream: HTTP 400: sessionKey not allowed (token [redacted])');
    expect(run.forwarded).to.equal(undefined);
    expect(upstream.calls, 'not retried').to.have.length(1);
  });

  it('a refused token (401): the run fails with errorCode forward_failed', async () => {
    await start();
    upstream.respond = () => ({ status: 401, body: 'Unauthorized' });
    const a = await call(`${app!.hooks}/agent`, { token: TOKEN, json: { message: 'hi' } });
    const run = await waitRun(a.data.runId, ended);
    expect(run).to.include({ status: 'failed', errorCode: 'forward_failed', error: 'forward failed: upstream: HTTP 401' });
  });

  it('an idempotent replay of the inbound request forwards nothing new', async () => {
    await start();
    const headers = { 'idempotency-key': 'order-77' };
    const first = await call(`${app!.hooks}/agent`, { token: TOKEN, headers, json: { message: 'ship order 77' } });
    const run = await waitRun(first.data.runId, ended);
    expect(run.status).to.equal('succeeded');
    const again = await call(`${app!.hooks}/agent`, { token: TOKEN, headers, json: { message: 'ship order 77' } });
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.data.runId).to.equal(first.data.runId);
    expect(forwardRows(), 'the replay committed no forward of its own').to.deep.equal([{ status: 'delivered' }]);
    expect(upstream.calls).to.have.length(1);
    const runs = (await call(`${app!.hooks}/runs`, { token: ADMIN_TOKEN })).data.runs;
    expect(runs).to.have.length(1);
  });

  it('the same key sent at once by two requests: one commit holds it, the other forwards nothing', async () => {
    await start();
    const headers = { 'idempotency-key': 'race-1' };
    const answers = await Promise.all([1, 2, 3].map(() => call(`${app!.hooks}/wake`, { token: TOKEN, headers, json: { text: 'once' } })));
    expect(new Set(answers.map((r) => r.data.eventId)).size, 'one event for the key').to.equal(1);
    await upstream.waitForCalls(1);
    expect(forwardRows(), 'one forward for the key').to.have.length(1);
    await until('the forward to settle', () => forwardRows()[0]?.status === 'delivered');
    expect(upstream.calls).to.have.length(1);
    expect(upstream.calls[0]!.headers['x-openclaw-idempotency-key']).to.equal(answers[0]!.data.eventId);
  });
});

describe('config: runtime (forward mode)', () => {
  const dir = tmpDir('hookrelay-forward-config-');
  const base = { hooks: { token: 't-0123456789' } };
  function problemsFor(raw: Record<string, unknown>): ConfigProblem[] {
    try {
      configFromObject(raw, path.join(dir, 'hookrelay.yaml'), {});
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    return [];
  }

  it('defaults to kind local', () => {
    const { config } = configFromObject(base, path.join(dir, 'hookrelay.yaml'), {});
    expect(config.runtime).to.deep.equal({ kind: 'local', forward: { token: '', timeoutSeconds: 30 } });
  });

  it('kind forward needs forward.url and forward.token, named by their paths', () => {
    const ps = problemsFor({ ...base, runtime: { kind: 'forward' } });
    expect(ps.map((p) => p.path)).to.have.members(['runtime.forward.url', 'runtime.forward.token']);
    expect(ps.find((p) => p.path === 'runtime.forward.url')!.message).to.include('required with runtime.kind: forward');
  });

  for (const url of ['ftp://example.com/hooks', 'example.com/hooks', 'http://']) {
    it(`forward.url must be http(s): ${url}`, () => {
      const ps = problemsFor({ ...base, runtime: { kind: 'forward', forward: { url, token: 'x' } } });
      expect(ps).to.have.length(1);
      expect(ps[0]).to.deep.include({ path: 'runtime.forward.url' });
      expect(ps[0]!.message).to.include('http:// or https://');
    });
  }

  it('an unknown kind and an unknown key are refused', () => {
    expect(problemsFor({ ...base, runtime: { kind: 'remote' } }).map((p) => p.path)).to.include('runtime.kind');
    expect(problemsFor({ ...base, runtime: { kind: 'local', forward: { url: 'http://x', tokn: 'y' } } }).map((p) => p.path)).to.include('runtime.forward.tokn');
  });

  it('a mapping naming a provider not configured here loads in forward mode (it is a config error in local mode)', () => {
    const mappings = [{ match: { path: 'x' }, messageTemplate: 'hi', deliver: true, provider: 'discord', to: '1' }];
    const local = problemsFor({ ...base, hooks: { ...base.hooks, mappings } });
    expect(local.map((p) => p.path)).to.deep.equal(['hooks.mappings[0].provider']);
    expect(problemsFor({ ...base, hooks: { ...base.hooks, mappings }, session: { provider: 'slack', to: 'C1' }, runtime: { kind: 'forward', forward: { url: 'https://up.example/hooks', token: 'x' } } })).to.deep.equal([]);
  });
});
