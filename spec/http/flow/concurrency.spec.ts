import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import fs from 'node:fs';
import { runCli } from '../../support/cli.js';
import { ADMIN_TOKEN, call, tmpDir, until } from '../../support/gateway.js';
import { startInProcess, type InProcess } from '../../support/in-process.js';
import { freshDatabase } from '../../support/postgres.js';

const TOKEN = 'flow-concurrency-token';

/** Per-mapping `concurrency` (CONTRACT.md §14), against the real app on each store. */
describe('flow control: per-mapping concurrency', function () {
  this.timeout(60000);
  let model: FakeModel;
  let gw: InProcess | undefined;
  beforeEach(async () => {
    model = await startFakeModel([{ delayMs: 400, reply: 'done' }]);
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    await model.close();
  });

  for (const backend of ['sqlite', 'postgres'] as const) {
    it(`${backend}: concurrency 1 never overlaps two runs, and its waiting runs leave agent.maxConcurrent to the others`, async () => {
      const dir = tmpDir('hookrelay-flow-');
      const store = backend === 'postgres' ? { kind: 'postgres', url: await freshDatabase('flowconc') } : undefined;
      gw = await startInProcess({
        ...(store ? { store } : {}),
        hooks: {
          token: TOKEN,
          mappings: [
            { id: 'slow', match: { path: 'slow' }, messageTemplate: 'slow {{n}}', wakeMode: 'next-heartbeat', concurrency: 1 },
            { id: 'other', match: { path: 'other' }, messageTemplate: 'other {{n}}', wakeMode: 'next-heartbeat' },
          ],
        },
        agent: { baseUrl: model.baseUrl, model: 'fake', maxConcurrent: 2 },
        heartbeat: { everySeconds: 3600 },
      }, dir);
      const post = (path: string, n: number) => call(`${gw!.hooks}/${path}`, { token: TOKEN, json: { n } });
      const answers = [];
      for (let n = 1; n <= 3; n++) answers.push(await post('slow', n));
      for (let n = 1; n <= 2; n++) answers.push(await post('other', n));
      for (const a of answers) expect(a.status, a.text).to.equal(202);
      for (const a of answers) {
        await until(() => `run ${a.data.runId} to succeed`, async () =>
          (await call(`${gw!.hooks}/runs/${a.data.runId}`, { token: ADMIN_TOKEN })).data.run.status === 'succeeded', 20000);
      }
      const slow = (r: { user: string }) => r.user.includes('slow ');
      expect(model.requests.filter(slow)).to.have.length(3);
      expect(model.maxOverlap(slow), 'slow runs in progress at once').to.equal(1);
      // The slow runs that waited took no slot: both others began before the last slow one did
      // (without the limit, the slow runs take both slots first and the second other waits for them).
      const lastSlow = Math.max(...model.requests.filter(slow).map((r) => r.at));
      for (const r of model.requests.filter((x) => !slow(x))) expect(r.at, 'other mapping began meanwhile').to.be.below(lastSlow);
      expect(model.maxOverlap(), 'agent.maxConcurrent').to.be.at.most(2);
    });
  }

  it('concurrency must be a positive integer: a config error naming the key', async () => {
    const dir = tmpDir('hookrelay-flow-');
    const file = `${dir}/hookrelay.json`;
    fs.writeFileSync(file, JSON.stringify({ hooks: { token: TOKEN, mappings: [{ id: 'a', match: { path: 'a' }, messageTemplate: 'x', concurrency: 0 }] } }));
    const r = await runCli(['check', '--config', file]);
    expect(r.code).to.equal(1);
    expect(r.stdout + r.stderr).to.match(/hooks\.mappings\[0\]\.concurrency: must be >= 1/);
  });
});
