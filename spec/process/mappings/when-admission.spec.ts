import { expect } from 'chai';
import { call, freePort, startGateway, until, type Gateway } from '../../support/gateway.js';
import { TOKEN } from '../../support/in-process.js';

const SCOPED = 'scoped-other-only-token-0123456789';
const wake = (id: string, match: Record<string, unknown>) => ({ id, match, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: `${id} {{n}}` });
/** A `when` whose work grows with the payload: one JSONata call per character of `text`. */
const HOSTILE = '$count($filter($split(payload.text, ""), function($c) { $c = "z" })) > 0';

/**
 * `match.when` is evaluated only for a request already admitted (its token reaches the
 * mapping, its signature verified), under the same step budget as every template (CONTRACT.md
 * §12), through the real bin: a scoped token that does not reach a mapping never makes its
 * `when` run, and eight large hostile requests at once leave `/healthz` answering.
 */
describe('http: match.when runs only for admitted requests, on a budget (CONTRACT.md §12)', function () {
  this.timeout(60000);
  let gw: Gateway;
  before(async () => {
    gw = await startGateway({
      server: { host: '127.0.0.1', port: await freePort() },
      hooks: {
        tokens: [TOKEN, { token: SCOPED, name: 'other-bot', routes: ['other'] }],
        mappings: [
          wake('other', { path: 'other' }),
          // Throws on a text level (T2009): each evaluation leaves a warning in the log.
          wake('probe-when', { path: 'probe', when: 'payload.level > 3' }),
          wake('probe-rest', { path: 'probe' }),
          wake('hostile', { path: 'hostile', when: HOSTILE }),
        ],
      },
    });
  });
  after(() => gw?.stop());

  const warnings = (mapping: string) => gw.output().split('\n').filter((l) => l.includes('match.when failed') && l.includes(`"mapping":"${mapping}"`));

  it('a scoped token that does not reach the mapping gets 403, and its when is never evaluated', async () => {
    const refused = await call(`${gw.hooks}/probe`, { token: SCOPED, json: { level: 'x', n: 1 } });
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.data.error.code).to.equal('forbidden');
    // The full token is admitted: its request evaluates the when (a warning), then takes probe-rest.
    const taken = await call(`${gw.hooks}/probe`, { token: TOKEN, json: { level: 'x', n: 2 } });
    expect(taken.status, taken.text).to.equal(200);
    await until('the admitted request\'s when warning', () => warnings('probe-when').length > 0);
    expect(warnings('probe-when'), 'one warning: the admitted request\'s only').to.have.length(1);
  });

  it('eight ~190 KB hostile when requests at once are each cut by the budget, while /healthz keeps answering', async () => {
    const text = 'a'.repeat(190_000);
    let done = false;
    const hostile = Promise.all(Array.from({ length: 8 }, (_, n) => call(`${gw.hooks}/hostile`, { token: TOKEN, json: { text, n } }))).finally(() => { done = true; });
    let slowest = 0;
    let probes = 0;
    while (!done) {
      const started = performance.now();
      expect((await call(`${gw.base}/healthz`)).status).to.equal(200);
      slowest = Math.max(slowest, performance.now() - started);
      probes++;
    }
    // A generous bound on a shared machine (CONTRACT.md §8 says about 100 ms); it was seconds.
    expect(slowest, `the slowest of ${probes} /healthz answers (ms)`).to.be.below(500);
    for (const r of await hostile) {
      expect(r.status, r.text).to.equal(404);
      expect(r.data.error.code).to.equal('no_mapping');
    }
    await until('the hostile when warnings', () => warnings('hostile').length === 8);
    for (const line of warnings('hostile')) expect(JSON.parse(line)).to.include({ code: 'too_many_steps' });
  });
});
