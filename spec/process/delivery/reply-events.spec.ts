import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { BIN, ROOT, call, until } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';

/** A heartbeat's reply is an event of kind `reply`, shown by GET {path}/events and `hookrelay events`. */
describe('http: reply events from heartbeat turns', function () {
  this.timeout(30000);
  let gw: InProcess;
  let model: FakeModel;
  let config: string;

  before(async () => {
    model = await startFakeModel([{ match: 'quiet', reply: 'HEARTBEAT_OK' }, { match: 'deploy', reply: 'The deploy finished.' }]);
    // No recipient configured: the reply is not delivered, and still recorded.
    gw = await startInProcess({ agent: { baseUrl: model.baseUrl } });
    config = path.join(gw.dir, 'hookrelay.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir: path.join(gw.dir, 'data'), hooks: { token: TOKEN } }));
    await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'deploy done' } });
    await until('the reply event', async () => (await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN })).data.events.some((e: { kind: string }) => e.kind === 'reply'), 10_000);
  });
  after(async () => {
    await gw.stop();
    await model.close();
  });

  it('hookrelay events prints it, --json and --follow too', async () => {
    const json = await new Promise<string>((resolve, reject) =>
      execFile(BIN, ['events', '--config', config, '--json'], { cwd: ROOT }, (err, out) => (err ? reject(err) : resolve(out))));
    const rows = json.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.find((e) => e.kind === 'reply')).to.include({ text: 'The deploy finished.', source: 'heartbeat' });

    const follow = spawn(BIN, ['events', '--config', config, '--follow', '--after', String(rows[rows.length - 1].seq)], { cwd: ROOT });
    try {
      let out = '';
      follow.stdout.on('data', (d) => (out += d));
      // Once it holds the store open it is at its first read: the wake below comes in while it follows.
      const holdsStore = () => fs.readdirSync(`/proc/${follow.pid}/fd`).some((fd) => {
        try { return fs.readlinkSync(`/proc/${follow.pid}/fd/${fd}`).startsWith(path.join(gw.dir, 'data')); } catch { return false; }
      });
      await until('hookrelay events --follow to open the store', () => follow.exitCode === null && holdsStore(), 10_000);
      await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'deploy again' } });
      await until('the followed reply', () => / reply +heartbeat +The deploy finished\.$/m.test(out), 10_000);
      expect(out).to.match(/ wake +wake +deploy again$/m);
    } finally {
      follow.kill();
    }
  });
});
