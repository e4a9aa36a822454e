import { execFile } from 'node:child_process';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';
import { freshDatabase } from '../../support/postgres.js';

const TOKEN = 'flow-pause-token';

/** The CLI's `main` in this process: exit code and output. */
const cli = (args: string[]) => runCli(args);

/** The real bin: exit code and output. */
function bin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, timeout: 30000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

/** `hookrelay pause` / `resume` (CONTRACT.md §14) beside the real gateway, on each store. */
describe('flow control: pause and resume', function () {
  this.timeout(60_000);
  let model: FakeModel;
  let gw: Gateway | undefined;
  beforeEach(async () => {
    model = await startFakeModel([{ reply: 'done' }]);
  });
  afterEach(async () => {
    await gw?.kill();
    gw = undefined;
    await model.close();
  });

  for (const backend of ['sqlite', 'postgres'] as const) {
    it(`${backend}: paused, requests are accepted and nothing is carried out, across a restart; resumed, all of it, in order`, async () => {
      const dir = tmpDir('hookrelay-pause-');
      const config = {
        server: { host: '127.0.0.1', port: await freePort() },
        dataDir: `${dir}/data`,
        ...(backend === 'postgres' ? { store: { kind: 'postgres', url: await freshDatabase('flowpause') } } : {}),
        hooks: {
          token: TOKEN,
          mappings: [
            { id: 'jobs', match: { path: 'jobs' }, messageTemplate: 'job {{n}}', wakeMode: 'next-heartbeat', concurrency: 1 },
            { id: 'notes', match: { path: 'notes' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' },
            { id: 'free', match: { path: 'free' }, messageTemplate: 'free {{n}}', wakeMode: 'next-heartbeat' },
          ],
        },
        agent: { baseUrl: model.baseUrl, model: 'fake' },
        heartbeat: { everySeconds: 3600 },
      };
      gw = await startGateway(config, { dir });
      const file = gw.configFile;
      const post = (path: string, n: number) => call(`${gw!.hooks}/${path}`, { token: TOKEN, json: { n } });
      const runOf = async (id: string) => (await call(`${gw!.hooks}/runs/${id}`, { token: ADMIN_TOKEN })).data.run;
      const succeeded = (id: string) => until(() => `run ${id} to succeed`, async () => (await runOf(id))?.status === 'succeeded', 20000);
      const eventTexts = async () => (await call(`${gw!.hooks}/events?after=0&limit=100`, { token: ADMIN_TOKEN })).data.events
        .filter((e: { kind: string }) => e.kind === 'wake').map((e: { text: string }) => e.text);
      const jobCalls = () => model.requests.filter((r) => r.user.includes('job ')).map((r) => /job (\d)/.exec(r.user)![1]);

      const unknown = await bin(['pause', 'nope', '--config', file]);
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.include('no mapping "nope"').and.include('jobs, notes, free');

      for (const m of ['jobs', 'notes']) {
        const r = await cli(['pause', m, '--config', file]);
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.include(`mapping ${m} paused`);
      }
      // One poll may see both pauses (the two commands can land within one PAUSE_POLL_MS).
      const pausedSeen = () => gw!.output().split('\n').filter((l) => l.includes('paused mappings changed')).map((l) => JSON.parse(l).paused as string[]).pop();
      await until(() => 'the gateway to see the pause', async () => ['jobs', 'notes'].every((m) => pausedSeen()?.includes(m)), 5000);

      const jobs = [];
      for (let n = 1; n <= 3; n++) {
        const a = await post('jobs', n);
        expect(a.status, a.text).to.equal(202);
        jobs.push(a.data.runId);
      }
      for (let n = 1; n <= 2; n++) expect((await post('notes', n)).status).to.equal(200);
      // Another mapping goes on meanwhile; once its run is done, the held ones have had their chance.
      await succeeded((await post('free', 1)).data.runId);
      for (const id of jobs) expect((await runOf(id)).status, 'a held run shows as queued').to.equal('queued');
      expect(jobCalls(), 'no held run reached the model').to.deep.equal([]);
      expect(await eventTexts(), 'a held wake is no event').to.deep.equal([]);
      const metrics = (await call(`${gw.base}/metrics`, { token: ADMIN_TOKEN })).text;
      expect(metrics).to.match(/^hookrelay_mapping_held\{mapping="jobs"\} 3$/m);
      expect(metrics).to.match(/^hookrelay_mapping_held\{mapping="notes"\} 2$/m);

      // A restart while paused: the pause is stored.
      expect(await gw.stop()).to.equal(0);
      gw = await startGateway(config, { dir });
      const a4 = await post('jobs', 4);
      expect(a4.status).to.equal(202);
      jobs.push(a4.data.runId);
      expect((await post('notes', 3)).status).to.equal(200);
      await succeeded((await post('free', 2)).data.runId);
      expect(jobCalls(), 'still held after the restart').to.deep.equal([]);
      expect(await eventTexts()).to.deep.equal([]);

      for (const m of ['jobs', 'notes']) {
        const r = await cli(['resume', m, '--config', file]);
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.include(`mapping ${m} resumed`);
      }
      for (const id of jobs) await succeeded(id);
      expect(jobCalls(), 'carried out in order').to.deep.equal(['1', '2', '3', '4']);
      await until(() => 'the held wakes to be released', async () => (await eventTexts()).length === 3, 5000);
      expect(await eventTexts()).to.deep.equal(['note 1', 'note 2', 'note 3']);
      const after = (await call(`${gw.base}/metrics`, { token: ADMIN_TOKEN })).text;
      expect(after).to.not.match(/^hookrelay_mapping_held\{mapping="jobs"\} [1-9]/m);
    });
  }

  it('postgres: two instances both hold a paused mapping, and release each held wake once', async () => {
    const url = await freshDatabase('flowpause2');
    const dir = tmpDir('hookrelay-pause2-');
    const configFor = async () => ({
      server: { host: '127.0.0.1', port: await freePort() },
      dataDir: `${dir}/data`,
      store: { kind: 'postgres', url },
      hooks: {
        token: TOKEN,
        mappings: [
          { id: 'jobs', match: { path: 'jobs' }, messageTemplate: 'job {{n}}', wakeMode: 'next-heartbeat' },
          { id: 'notes', match: { path: 'notes' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' },
        ],
      },
      agent: { baseUrl: model.baseUrl, model: 'fake' },
      heartbeat: { everySeconds: 3600 },
    });
    const a = await startGateway(await configFor(), { dir: tmpDir('hookrelay-pause2a-') });
    const b = await startGateway(await configFor(), { dir: tmpDir('hookrelay-pause2b-') });
    try {
      for (const m of ['jobs', 'notes']) expect((await cli(['pause', m, '--config', a.configFile])).code).to.equal(0);
      // Each instance logs the paused set when it changes: both must name the second pause within a second or so.
      for (const g of [a, b]) await until(() => 'each instance to see both pauses', async () => /paused mappings changed/.test(g.output()) && g.output().includes('"notes"'), 5000);
      const runs = [];
      for (const [g, n] of [[a, 1], [b, 2], [a, 3], [b, 4]] as const) {
        runs.push((await call(`${g.hooks}/jobs`, { token: TOKEN, json: { n } })).data.runId);
        expect((await call(`${g.hooks}/notes`, { token: TOKEN, json: { n } })).status).to.equal(200);
      }
      const events = async () => (await call(`${a.hooks}/events?after=0&limit=100`, { token: ADMIN_TOKEN })).data.events.map((e: { text: string }) => e.text);
      expect(await events()).to.deep.equal([]);
      expect(model.requests.filter((r) => r.user.includes('job '))).to.deep.equal([]);
      expect((await cli(['resume', 'notes', '--config', b.configFile])).code).to.equal(0);
      expect((await cli(['resume', 'jobs', '--config', b.configFile])).code).to.equal(0);
      for (const id of runs) await until(() => `run ${id} to succeed`, async () => (await call(`${a.hooks}/runs/${id}`, { token: ADMIN_TOKEN })).data.run.status === 'succeeded', 20000);
      await until(() => 'the wakes released', async () => (await events()).filter((t: string) => t.startsWith('note')).length >= 4, 5000);
      expect((await events()).filter((t: string) => t.startsWith('note'))).to.deep.equal(['note 1', 'note 2', 'note 3', 'note 4']);
      expect(model.requests.filter((r) => r.user.includes('job ')).map((r) => /job (\d)/.exec(r.user)![1]).sort()).to.deep.equal(['1', '2', '3', '4']);
    } finally {
      await a.kill();
      await b.kill();
    }
  });
});
