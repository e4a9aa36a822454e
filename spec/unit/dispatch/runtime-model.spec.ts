import { expect } from 'chai';
import type { Accepted } from '../../../src/action.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../../../src/dispatch/model.js';
import type { Runtime } from '../../../src/dispatch/runtime.js';
import type { ModelRule } from '../../support/fake-model.js';
import { agent, dispatch, Harness, runIdOf } from './runtime-harness.js';

describe('dispatch/runtime (real store, fake model and Telegram)', function () {
  this.timeout(15000);
  let h: Harness;
  afterEach(async () => { await h.close(); });

  describe('agent runs', () => {
    it('fails a run when the model keeps answering 500 (after every retry), without server text', async () => {
      h = await new Harness().open({}, [{ status: 500, error: { message: 'secret prompt echo' }, headers: { 'retry-after-ms': '1' } }]);
      const rt = await h.runtime();
      const [a] = await dispatch(rt, [agent('boom', { wakeMode: 'now' })]);
      const run = await h.run(runIdOf(a!), 'failed');
      const host = new URL(h.model.baseUrl).host;
      expect(run.error).to.equal(`the model server at ${host} answered HTTP 500`);
      expect(run.errorCode).to.equal('model_http');
      expect(h.model.requests.filter((r) => r.user.includes('boom'))).to.have.length(DEFAULT_RETRY.attempts);
      const [s] = await h.summaries();
      expect(s!.text).to.include(`failed: the model server at ${host} answered HTTP 500`).and.not.include('secret');
    });

    it('a 4xx other than 408/429 is not retried: failed at once, model_http', async () => {
      h = await new Harness().open({}, [{ status: 404, error: { code: 'model_not_found' } }]);
      const rt = await h.runtime({ attempts: 6, baseMs: 10, maxMs: 50 });
      const [a] = await dispatch(rt, [agent('nope')]);
      const run = await h.run(runIdOf(a!), 'failed');
      expect(run).to.include({ errorCode: 'model_http', error: `the model server at ${new URL(h.model.baseUrl).host} answered HTTP 404 (model_not_found): check agent.model (or the mapping's model)` });
      expect(h.model.requests).to.have.length(1);
    });

    it('a base URL without /v1 (404 from the server): the error names the endpoint and says to check agent.baseUrl, never the key', async () => {
      h = await new Harness().open();
      const bare = h.model.baseUrl.replace(/\/v1$/, '');
      const withSecrets = `${bare}?token=query-secret`;
      h.config = { ...h.config, agent: { ...h.config.agent, baseUrl: withSecrets, apiKey: 'sk-api-key-secret' } };
      const rt = await h.runtime({ attempts: 6, baseMs: 10, maxMs: 50 });
      const [a] = await dispatch(rt, [agent('where')]);
      const run = await h.run(runIdOf(a!), 'failed');
      const host = new URL(bare).host;
      expect(run).to.include({
        errorCode: 'model_http',
        error: `the model server at ${host} answered HTTP 404 at ${bare}/chat/completions: check agent.baseUrl — OpenAI-compatible servers usually end in /v1`,
      });
      const [s] = await h.summaries();
      expect(s!.text).to.include('check agent.baseUrl').and.not.match(/secret/);
    });

    it('a model server that cannot be reached is named by host, never by key or path; retried, then model_unreachable', async () => {
      h = await new Harness().open({ agent: { baseUrl: 'http://127.0.0.1:9/v1/path-secret-123', apiKey: 'sk-key-secret-456' } });
      const rt = await h.runtime({ attempts: 3, baseMs: 20, maxMs: 50 });
      const [a] = await dispatch(rt, [agent('anyone there')]);
      const run = await h.run(runIdOf(a!), 'failed');
      expect(run).to.include({ errorCode: 'model_unreachable', error: 'could not reach the model server at 127.0.0.1:9' });
      const s = (await h.summaries()).find((e) => e.source === `run:${run.runId}`)!;
      expect(s.text).to.include('could not reach the model server at 127.0.0.1:9').and.not.match(/secret/);
    });

    it('sends thinking as reasoning_effort, and retries once without it when the server refuses it', async () => {
      h = await new Harness().open({}, [{
        when: (r) => 'reasoning_effort' in r.body,
        status: 400,
        error: { message: 'Unrecognized request argument supplied: reasoning_effort', param: 'reasoning_effort' },
      }]);
      const rt = await h.runtime();
      const [a] = await dispatch(rt, [agent('think', { thinking: 'low' })]);
      await h.run(runIdOf(a!), 'succeeded');
      expect(h.model.requests.map((r) => r.body.reasoning_effort)).to.deep.equal(['low', undefined]);
      // Remembered for the model: the next run does not ask again.
      const [b] = await dispatch(rt, [agent('think again', { thinking: 'high' })]);
      await h.run(runIdOf(b!), 'succeeded');
      expect(h.model.requests.map((r) => r.body.reasoning_effort)).to.deep.equal(['low', undefined, undefined]);
    });
  });
});

/**
 * The cases that wait out a time limit or a Retry-After in real time, each on its own harness:
 * all sent in `before`, so that their waits overlap; each test then awaits its own.
 */
describe('dispatch/runtime model waits (real store, fake model and Telegram)', function () {
  this.timeout(15000);
  const harnesses: Harness[] = [];
  async function harness(rules: ModelRule[], retry?: RetryPolicy): Promise<{ h: Harness; rt: Runtime }> {
    const h = await new Harness().open({}, rules);
    harnesses.push(h);
    return { h, rt: await h.runtime(retry) };
  }
  let slow: { h: Harness; t0: number; runs: Accepted[] };
  let persist: { h: Harness; runs: Accepted[] };
  let hurry: { h: Harness; t0: number; runs: Accepted[] };
  before(async () => {
    const s = await harness([{ match: 'slow', delayMs: 5000 }]);
    const p = await harness([
      { status: 429, times: 1, headers: { 'retry-after': '1' } },
      { status: 503, times: 1 },
      { reply: 'made it' },
    ], { attempts: 6, baseMs: 50, maxMs: 200 });
    const u = await harness([{ status: 503, headers: { 'retry-after': '30' } }]);
    const t0 = Date.now();
    slow = { h: s.h, t0, runs: await dispatch(s.rt, [agent('slow one', { timeoutSeconds: 1, name: 'Slow' }), agent('fast one')]) };
    persist = { h: p.h, runs: await dispatch(p.rt, [agent('persist')]) };
    hurry = { h: u.h, t0, runs: await dispatch(u.rt, [agent('hurry', { timeoutSeconds: 1 })]) };
  });
  after(async () => {
    for (const h of harnesses) await h.close();
  });

  it('times out a slow model call: timed_out, summarised, next run of the session still runs', async () => {
    const { h, t0, runs: [a, b] } = slow;
    const run = await h.run(runIdOf(a!), 'timed_out');
    expect(Date.now() - t0).to.be.below(2500);
    expect(run.error).to.match(/timed out after 1 s/);
    expect(run.errorCode).to.equal('model_timeout');
    await h.run(runIdOf(b!), 'succeeded');
    const s = (await h.summaries()).find((e) => e.source === `run:${run.runId}`)!;
    expect(s.text).to.match(/^\[Slow\] /).and.include('timed out after 1 s');
  });

  it('retries 429 (waiting out its Retry-After) and 503 with backoff, then succeeds', async () => {
    const { h, runs: [a] } = persist;
    const run = await h.run(runIdOf(a!), ['succeeded', 'failed']);
    expect(run).to.include({ status: 'succeeded', reply: 'made it' });
    expect(run.errorCode).to.equal(undefined);
    const at = h.model.requests.map((r) => r.at);
    expect(at).to.have.length(3);
    expect(at[1]! - at[0]!, 'Retry-After: 1 waited out').to.be.at.least(950);
    expect(at[2]! - at[1]!, 'the 503 backoff, not a Retry-After').to.be.below(900);
  });

  it('retries stay within the run\'s time limit: a Retry-After past it ends the run timed_out (model_timeout)', async () => {
    const { h, t0, runs: [a] } = hurry;
    const run = await h.run(runIdOf(a!), ['timed_out', 'failed'], 5000);
    expect(run).to.include({ status: 'timed_out', errorCode: 'model_timeout', error: 'timed out after 1 s' });
    expect(Date.now() - t0).to.be.below(2500);
    expect(h.model.requests).to.have.length(1);
  });
});
