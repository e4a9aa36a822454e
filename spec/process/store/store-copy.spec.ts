import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';
import { freshDatabase } from '../../support/postgres.js';

const exec = promisify(execFile);
const TOKEN = 'store-copy-token';

/** The real bin: exit code, stdout, stderr (a failure is an answer here, not an error). */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await exec(BIN, [...args], { cwd: ROOT });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** `hookrelay store copy`. */
function copy(from: string, to: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return cli(['store', 'copy', '--from', from, '--to', to]);
}

describe('hookrelay store copy (real bin: SQLite → PostgreSQL)', function () {
  this.timeout(60_000);
  let model: FakeModel;
  let gw: Gateway | undefined;
  before(async () => {
    model = await startFakeModel([{ match: 'copy me', reply: 'copied reply' }]);
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });
  after(() => model.close());

  it('copies events (same seq), runs, conversations and idempotency keys; serving on the copy answers the same; a non-empty target or a source in use is refused', async () => {
    const dir = tmpDir('hookrelay-copy-');
    const base = {
      hooks: { token: TOKEN },
      agent: { baseUrl: model.baseUrl, model: 'fake' },
      heartbeat: { everySeconds: 3600 },
    };
    const sqliteConfig = { ...base, server: { host: '127.0.0.1', port: await freePort() }, dataDir: path.join(dir, 'data') };
    gw = await startGateway(sqliteConfig, { dir });
    for (let i = 0; i < 5; i++) expect((await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: `w${i}`, mode: 'next-heartbeat' } })).status).to.equal(200);
    const keyed = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'keyed', mode: 'next-heartbeat' }, headers: { 'idempotency-key': 'k-1' } });
    expect(keyed.status).to.equal(200);
    const a = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'copy me', sessionKey: 'hook:copy', wakeMode: 'next-heartbeat' } });
    expect(a.status, a.text).to.equal(202);
    const runId: string = a.data.runId;
    let r: any;
    await until(() => `the run to succeed: ${JSON.stringify(r)}`, async () => {
      r = (await call(`${gw!.hooks}/runs/${runId}`, { token: ADMIN_TOKEN })).data.run;
      return r.status === 'succeeded';
    }, 20_000);
    const eventsBefore = (await call(`${gw.hooks}/events?after=0&limit=1000`, { token: ADMIN_TOKEN })).data.events;
    const runBefore = (await call(`${gw.hooks}/runs/${runId}`, { token: ADMIN_TOKEN })).data.run;
    const fromFile = gw.configFile;

    const pgFile = path.join(dir, 'pg.json');
    const pgConfig = { ...base, server: { host: '127.0.0.1', port: await freePort() }, dataDir: path.join(dir, 'pg-data'), store: { kind: 'postgres', url: await freshDatabase('copy') } };
    fs.writeFileSync(pgFile, JSON.stringify(pgConfig));

    // The source is in use: refused, nothing copied.
    const busy = await copy(fromFile, pgFile);
    expect(busy.code).to.equal(1);
    expect(busy.stderr).to.match(/another hookrelay process .* is using it; stop that process first/);
    await gw.stop();
    gw = undefined;

    const done = await copy(fromFile, pgFile);
    expect(done.code, done.stderr).to.equal(0);
    const n = eventsBefore.length;
    expect(n, done.stdout).to.be.at.least(7); // 6 wakes and the run's summary at least
    expect(done.stdout).to.match(new RegExp(`^events: ${n} copied$`, 'm'));
    expect(done.stdout).to.match(/^runs: 1 copied$/m);
    expect(done.stdout).to.match(new RegExp(`^copied: ${n} events, 1 runs, 2 history, 0 outbox, 1 idempotency, \\d+ state, 0 paused, 0 held_events$`, 'm'));

    // Into it again: the target is no longer empty.
    const again = await copy(fromFile, pgFile);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.match(/the target store \(postgres:\/\/.*\) is not empty: copy into a new database or data directory, or empty this one first/);

    gw = await startGateway(pgConfig, { dir: tmpDir('hookrelay-copy-pg-') });
    expect((await call(`${gw.hooks}/events?after=0&limit=1000`, { token: ADMIN_TOKEN })).data.events).to.deep.equal(eventsBefore);
    expect((await call(`${gw.hooks}/runs/${runId}`, { token: ADMIN_TOKEN })).data.run).to.deep.equal(runBefore);
    const replay = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'keyed', mode: 'next-heartbeat' }, headers: { 'idempotency-key': 'k-1' } });
    expect(replay.status).to.equal(200);
    expect(replay.data).to.deep.equal(keyed.data);
    const next = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'after the move', mode: 'next-heartbeat' } });
    expect(next.status).to.equal(200);
    const events = (await call(`${gw.hooks}/events?after=${eventsBefore.at(-1).seq}`, { token: ADMIN_TOKEN })).data.events;
    expect(events.map((e: { text: string }) => e.text)).to.deep.equal(['after the move']);
    expect(events[0].seq).to.equal(eventsBefore.at(-1).seq + 1);
  });

  it('copies a paused mapping and the wakes it holds: on the copy they stay held until it is resumed, then come out in order', async () => {
    const dir = tmpDir('hookrelay-copy-held-');
    const base = {
      hooks: { token: TOKEN, mappings: [{ id: 'notes', match: { path: 'notes' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' }] },
      agent: { baseUrl: model.baseUrl, model: 'fake' },
      heartbeat: { everySeconds: 3600 },
    };
    gw = await startGateway({ ...base, server: { host: '127.0.0.1', port: await freePort() }, dataDir: path.join(dir, 'data') }, { dir });
    const fromFile = gw.configFile;
    expect((await call(`${gw.hooks}/notes`, { token: TOKEN, json: { n: 0 } })).status).to.equal(200);
    const paused = await cli(['pause', 'notes', '--config', fromFile]);
    expect(paused.code, paused.stderr).to.equal(0);
    await until(() => 'the gateway to see the pause', async () => /paused mappings changed/.test(gw!.output()), 5000);
    for (const n of [1, 2]) expect((await call(`${gw.hooks}/notes`, { token: TOKEN, json: { n } })).status).to.equal(200);
    // The wakes' texts (the main session's replies are events too).
    const texts = async (g: Gateway): Promise<string[]> => (await call(`${g.hooks}/events?after=0&limit=100`, { token: ADMIN_TOKEN })).data.events
      .map((e: { text: string }) => e.text).filter((t: string) => t.startsWith('note'));
    expect(await texts(gw)).to.deep.equal(['note 0']);
    await gw.stop();
    gw = undefined;

    const pgFile = path.join(dir, 'pg.json');
    fs.writeFileSync(pgFile, JSON.stringify({ ...base, server: { host: '127.0.0.1', port: await freePort() }, dataDir: path.join(dir, 'pg-data'), store: { kind: 'postgres', url: await freshDatabase('copy_held') } }));
    const done = await copy(fromFile, pgFile);
    expect(done.code, done.stderr).to.equal(0);
    expect(done.stdout).to.match(/^copied: 1 events, 0 runs, 0 history, 0 outbox, 0 idempotency, \d+ state, 1 paused, 2 held_events$/m);

    gw = await startGateway(JSON.parse(fs.readFileSync(pgFile, 'utf8')), { dir: tmpDir('hookrelay-copy-held-pg-') });
    // Still paused on the copy: a new wake is held behind the two copied ones.
    expect((await call(`${gw.hooks}/notes`, { token: TOKEN, json: { n: 3 } })).status).to.equal(200);
    expect(await texts(gw)).to.deep.equal(['note 0']);
    const resumed = await cli(['resume', 'notes', '--config', pgFile]);
    expect(resumed.code, resumed.stderr).to.equal(0);
    await until(() => 'the held wakes to come out', async () => (await texts(gw!)).length === 4, 10_000);
    expect(await texts(gw)).to.deep.equal(['note 0', 'note 1', 'note 2', 'note 3']);
  });
});
