import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';

const TOKEN = 'store-reliability-token';

function configFor(dir: string, port: number, agent: Record<string, unknown> = {}) {
  return {
    server: { host: '127.0.0.1', port },
    dataDir: path.join(dir, 'data'),
    hooks: { token: TOKEN },
    agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'fake', timeoutSeconds: 30, ...agent },
    heartbeat: { everySeconds: 3600 },
  };
}

const wake = (gw: { hooks: string }, text: string) => call(`${gw.hooks}/wake`, { token: TOKEN, json: { text, mode: 'next-heartbeat' } });

/** Every event id the server lists, paging through /events. */
async function listedIds(hooks: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let after = 0; ;) {
    const r = await call(`${hooks}/events?after=${after}&limit=1000`, { token: ADMIN_TOKEN });
    expect(r.status, r.text).to.equal(200);
    if (r.data.events.length === 0) return ids;
    for (const e of r.data.events) ids.add(e.id);
    after = r.data.events[r.data.events.length - 1].seq;
  }
}

describe('store reliability (real server processes)', function () {
  this.timeout(60000);
  let model: FakeModel | undefined;
  const gateways: Gateway[] = [];
  const children: ChildProcess[] = [];

  afterEach(async () => {
    for (const gw of gateways.splice(0)) await gw.kill();
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    await model?.close();
    model = undefined;
  });

  it('a second server on the same dataDir exits 1 naming the first; the first keeps its running run; after a SIGKILL a new one starts at once', async () => {
    model = await startFakeModel([{ match: 'hold', reply: 'held reply', delayMs: 3000 }]);
    const dir = tmpDir();
    const config = configFor(dir, await freePort(), { baseUrl: model.baseUrl });
    const first = await startGateway(config, { dir });
    gateways.push(first);
    const a = await call(`${first.hooks}/agent`, { token: TOKEN, json: { message: 'hold this', deliver: false, wakeMode: 'next-heartbeat' } });
    expect(a.status).to.equal(202);
    await model.waitForRequests(1);
    expect((await call(`${first.hooks}/runs/${a.data.runId}`, { token: ADMIN_TOKEN })).data.run.status).to.equal('running');

    // Same config but another port, so that only the data directory is shared.
    const second = path.join(dir, 'second.json');
    fs.writeFileSync(second, JSON.stringify({ ...config, server: { ...config.server, port: await freePort() } }));
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(BIN, ['serve', '--config', second], { cwd: ROOT, timeout: 15000 }, (err, _out, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stderr }));
    });
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stderr).to.match(/^dataDir: /m);
    expect(r.stderr).to.include(`pid ${first.proc.pid}`).and.include(config.dataDir).and.include('its own dataDir');

    // The first server was not disturbed: its run was not "recovered" as interrupted (it is
    // still running, unless the second start took longer than the model holds the reply).
    const mid = await call(`${first.hooks}/runs/${a.data.runId}`, { token: ADMIN_TOKEN });
    expect(mid.data.run.status).to.be.oneOf(['running', 'succeeded']);
    expect((await wake(first, 'still serving')).status).to.equal(200);
    const held = await until('the held run to finish', async () => {
      const run = (await call(`${first.hooks}/runs/${a.data.runId}`, { token: ADMIN_TOKEN })).data.run;
      return run.status !== 'running' ? run : undefined;
    }, 20_000);
    expect(held).to.include({ status: 'succeeded', reply: 'held reply' });

    // SIGKILL: the kernel drops the lock with the process, so a restart takes it at once.
    await first.kill();
    const again = await startGateway(config, { dir });
    gateways.push(again);
    expect((await call(`${again.hooks}/runs/${a.data.runId}`, { token: ADMIN_TOKEN })).data.run.status).to.equal('succeeded');
  });

  it('a removed database: 503 unavailable with Retry-After for writes, reads and /healthz, naming it; the process keeps running, one clear log line', async () => {
    const dir = tmpDir();
    const gw = await startGateway(configFor(dir, await freePort()), { dir });
    gateways.push(gw);
    expect((await wake(gw, 'before')).status).to.equal(200);
    const dataDir = path.join(dir, 'data');
    for (const f of fs.readdirSync(dataDir)) if (f.startsWith('hookrelay.db')) fs.rmSync(path.join(dataDir, f));

    for (const r of [await wake(gw, 'after'), await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN }), await wake(gw, 'later'), await call(`${gw.base}/healthz`)]) {
      expect(r.status, r.text).to.equal(503);
      expect(r.data.error.code).to.equal('unavailable');
      expect(r.data.error.message).to.include('restart hookrelay');
      expect(r.headers.get('retry-after')).to.match(/^\d+$/);
    }
    expect(gw.proc.exitCode).to.equal(null);
    // Every request above was answered before the line is flushed, so a second line would be out too.
    const lines = (await gw.logged('removed or replaced')).split('\n').filter((l) => l.includes('removed or replaced'));
    expect(lines, 'one line about the removed database').to.have.length(1);
    expect(lines[0]).to.include('hookrelay.db was removed').and.include('start it again');
  });

  it('a full disk (file-size limit): 503 unavailable with Retry-After, /healthz 503 with the same cause, and every 200 is there after a restart', async () => {
    const dir = tmpDir();
    const config = configFor(dir, await freePort());
    const file = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(file, JSON.stringify(config));
    // 2048 blocks of 512 bytes (dash's unit): 1 MiB per file. Node ignores SIGXFSZ, so a
    // write past it fails with EFBIG instead of killing the process.
    const proc = spawn('sh', ['-c', 'ulimit -f 2048; exec "$0" "$@"', BIN, 'serve', '--config', file], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(proc);
    let log = '';
    proc.stdout!.on('data', (d) => (log += d));
    proc.stderr!.on('data', (d) => (log += d));
    const gw = { base: `http://127.0.0.1:${config.server.port}`, hooks: `http://127.0.0.1:${config.server.port}/hooks` };
    await until(() => `the gateway to become healthy: ${log}`, async () => {
      expect(proc.exitCode, log).to.equal(null);
      return call(`${gw.base}/healthz`).then((r) => r.status === 200, () => false);
    }, 30_000);

    const acked: string[] = [];
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 1000 && !refused; i++) {
      const r = await wake(gw, `${i} ${'x'.repeat(8000)}`);
      if (r.status === 200) acked.push(r.data.eventId);
      else refused = r;
    }
    expect(acked.length, 'accepted until the limit').to.be.greaterThan(5);
    expect(refused, 'refused once full').to.not.equal(undefined);
    expect(refused!.status, refused!.text).to.equal(503);
    expect(refused!.data.error.code).to.equal('unavailable');
    expect(refused!.headers.get('retry-after')).to.match(/^\d+$/);
    const health = await call(`${gw.base}/healthz`);
    expect(health.status, health.text).to.equal(503);
    expect(health.data.error).to.deep.equal(refused!.data.error);
    expect(proc.exitCode).to.equal(null);

    proc.kill('SIGKILL');
    await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)));
    const again = await startGateway(config, { dir });
    gateways.push(again);
    const listed = await listedIds(again.hooks);
    expect(acked.filter((id) => !listed.has(id)), 'acknowledged events missing after the restart').to.deep.equal([]);
  });
});
