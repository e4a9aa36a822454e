import { expect } from 'chai';
import { FIXTURE_TRANSFORMS } from '../../unit/engine/make-config.js';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Transforms run in worker threads: one that never ends or kills its thread costs its own
 * request a 500 transform_failed after hooks.transformTimeoutMs, while the listener, the
 * other mappings and the calls waiting behind it go on (before the pool, a `for (;;)` froze
 * the whole process and the time-out never fired).
 */
describe('http: a stuck or crashing transform cannot stall the gateway', () => {
  let gw: InProcess;
  const TIMEOUT = 1500;
  const mapping = (id: string, exported: string) =>
    ({ id, match: { path: id }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'template', transform: { module: 'stuck.mjs', export: exported } });

  before(async () => {
    gw = await startInProcess({
      hooks: {
        transformsDir: FIXTURE_TRANSFORMS,
        transformTimeoutMs: TIMEOUT,
        transformPoolSize: 2,
        mappings: [
          mapping('maybe-loop', 'maybeLoop'), mapping('never', 'never'), mapping('exit', 'exit'), mapping('echo', 'echo'),
          { id: 'plain', match: { path: 'plain' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'no transform' },
        ],
      },
    });
  });
  after(async () => { await gw.stop(); });

  const post = (name: string, json: Record<string, unknown>) => call(`${gw.hooks}/${name}`, { token: TOKEN, json });
  const timed = async <T>(p: Promise<T>): Promise<T & { ms: number }> => {
    const t0 = Date.now();
    const r = await p;
    return { ...r, ms: Date.now() - t0 };
  };

  function expectFailed(r: { status: number; text: string; data: any }): void {
    expect(r.status, r.text).to.equal(500);
    expect(r.data.error.code).to.equal('transform_failed');
    expect(r.text).to.not.include('hunter2');
  }

  for (const [name, payload, what] of [['maybe-loop', { loop: true }, 'a synchronous loop'], ['never', {}, 'a promise that never settles']] as const) {
    it(`${what}: 500 transform_failed after the time limit; /healthz and other mappings answer meanwhile; then it works again`, async () => {
      const stuck = timed(post(name, { ...payload, secret: 'hunter2' }));
      await new Promise((r) => setTimeout(r, 100)); // the call is in its worker now
      const health = await timed(call(`${gw.base}/healthz`));
      const plain = await timed(post('plain', {}));
      // In the other worker, or in a replacement that is still starting: not after the stuck call.
      const other = await timed(post('echo', { n: 1 }));
      expect([health.status, plain.status, other.status]).to.deep.equal([200, 200, 200]);
      expect(health.ms, 'healthz during the stuck call').to.be.below(200);
      expect(plain.ms, 'a mapping without transform during the stuck call').to.be.below(200);
      expect(other.ms, 'a transform mapping during the stuck call').to.be.below(TIMEOUT - 500);

      const r = await stuck;
      expectFailed(r);
      expect(r.ms).to.be.within(TIMEOUT - 50, TIMEOUT + 1000);

      const again = await post('maybe-loop', { n: 2 });
      expect(again.status, again.text).to.equal(200);
      const events = await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN });
      expect(events.data.events.at(-1).text).to.equal('done 2');
    });
  }

  it('a transform calling process.exit: 500 for that request, and the server lives on', async () => {
    const r = await post('exit', { secret: 'hunter2' });
    expectFailed(r);
    expect((await call(`${gw.base}/healthz`)).status).to.equal(200);
    expect((await post('echo', { n: 3 })).status).to.equal(200);
  });

  it('requests queued behind stuck transforms all succeed, none fails for the stuck ones', async () => {
    // Both workers stuck until their time-out; ten requests wait for the replacements.
    const stuck = [post('maybe-loop', { loop: true }), post('never', {})];
    await new Promise((r) => setTimeout(r, 100));
    const queued = await Promise.all(Array.from({ length: 10 }, (_, n) => post('maybe-loop', { n })));
    expect(queued.map((q) => q.status)).to.deep.equal(Array(10).fill(200));
    expect((await Promise.all(stuck)).map((s) => s.status)).to.deep.equal([500, 500]);
    const events = await call(`${gw.hooks}/events?limit=100`, { token: ADMIN_TOKEN });
    const texts = new Set(events.data.events.map((e: { text: string }) => e.text));
    for (let n = 0; n < 10; n++) expect(texts.has(`done ${n}`), `done ${n}`).to.equal(true);
  });
});
