import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer } from '../../support/fake-upstream.js';
import { ended, expectForwardHeaders, forwardRowsOf, startForward, waitRunOf } from '../../support/forward-mode.js';
import { call, until } from '../../support/gateway.js';
import { TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Forward mode's retries (CONTRACT.md §9), each against its own upstream and gateway, all sent in `before` so that their
 * real-time waits (Retry-After, back-off) overlap; each test then awaits its own.
 */
describe('http: forward mode retries (runtime.kind: forward)', function () {
  this.timeout(30_000);
  let model: FakeModel;
  const upstreams: FakeUpstream[] = [];
  const apps: InProcess[] = [];
  interface Scenario { upstream: FakeUpstream; app: InProcess; times: number[]; accepted: Promise<Awaited<ReturnType<typeof call>>> }
  /** An upstream answering its `n`th call with `respond`, a gateway forwarding to it, and the request `send` makes there. */
  async function scenario(respond: (n: number) => UpstreamAnswer | undefined, send: (app: InProcess) => ReturnType<typeof call>): Promise<Scenario> {
    const upstream = await startFakeUpstream();
    upstreams.push(upstream);
    const times: number[] = [];
    upstream.respond = () => {
      times.push(Date.now());
      return respond(times.length);
    };
    const app = await startForward(upstream, model);
    apps.push(app);
    const accepted = send(app);
    accepted.catch(() => {});
    return { upstream, app, times, accepted };
  }
  let rateLimited: Scenario;
  let overloaded: Scenario;
  let gone: Scenario;

  before(async () => {
    model = await startFakeModel([{ reply: 'the model must not be called in forward mode' }]);
    rateLimited = await scenario((n) => (n === 1 ? { status: 429, body: 'Too Many Requests', headers: { 'retry-after': '2' } } : undefined),
      (app) => call(`${app.hooks}/agent`, { token: TOKEN, json: { message: 'hi' } }));
    overloaded = await scenario((n) => (n === 1 ? { status: 503, body: { ok: false, error: 'overloaded' } } : undefined),
      (app) => call(`${app.hooks}/wake`, { token: TOKEN, json: { text: 'deploy done' } }));
    gone = await scenario(() => ({ status: 502, body: 'Bad Gateway' }), (app) => call(`${app.hooks}/wake`, { token: TOKEN, json: { text: 'x' } }));
  });
  after(async () => {
    for (const app of apps) await app.stop();
    for (const upstream of upstreams) await upstream.close();
    await model?.close();
  });

  it('429 with Retry-After: waits it out, then sends again with the same idempotency key; the run succeeds', async () => {
    const { upstream, app, times } = rateLimited;
    const a = await rateLimited.accepted;
    const run = await waitRunOf(app, a.data.runId, ended);
    expect(times[1]! - times[0]!, 'Retry-After waited out in full, beyond delivery.maxDelaySeconds (1 s)').to.be.greaterThanOrEqual(1_950);
    expect(run.status).to.equal('succeeded');
    expect(run.forwarded.status).to.equal(200);
    const calls = upstream.calls;
    expect(calls).to.have.length(2);
    for (const c of calls) expectForwardHeaders(upstream, c, a.data.runId);
    expect(upstream.actions).to.have.length(1);
  });

  it('a 5xx, then success: retried with back-off and the same key, acted on once upstream', async () => {
    const { upstream, times } = overloaded;
    const w = await overloaded.accepted;
    await upstream.waitForCalls(2);
    expect(times[1]! - times[0]!, 'back-off of the first retry: 1 s plus jitter').to.be.greaterThanOrEqual(900);
    for (const c of upstream.calls) expectForwardHeaders(upstream, c, w.data.eventId);
    expect(upstream.actions.map((x) => x.key)).to.deep.equal([w.data.eventId]);
  });

  it('an upstream that never comes back (502): sent delivery.maxAttempts times, then no more', async () => {
    const { upstream, app } = gone;
    await gone.accepted;
    await until('the wake\'s forward to be given up', () => forwardRowsOf(app)[0]?.status === 'failed', 10_000);
    expect(upstream.calls.filter((c) => c.path.endsWith('/wake'))).to.have.length(3);
  });
});
