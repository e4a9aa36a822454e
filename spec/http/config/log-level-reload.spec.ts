import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/log.js';
import { start, type Running } from '../../../src/serve.js';
import { ADMIN_TOKEN, call, freePort, tmpDir } from '../../support/gateway.js';

const TOKEN = 'log-level-reload-token-0123456789';

/** CONTRACT.md §16: `log.level` is applied by a reload, no restart needed, unless `--log-level` or the environment sets it. */
describe('http: log.level applied on reload', function () {
  this.timeout(30000);
  const runs: Running[] = [];
  after(async () => { await Promise.all(runs.map((r) => r.stop())); });

  async function gateway(levelFixedBy?: string) {
    const dir = tmpDir();
    const file = path.join(dir, 'hookrelay.json');
    const config = (level: string) => ({
      server: { host: '127.0.0.1', port, adminToken: ADMIN_TOKEN }, dataDir: path.join(dir, 'data'), log: { level },
      hooks: { token: TOKEN, mappings: [{ id: 'bad', match: { path: 'bad' }, action: 'wake', engine: 'jsonata', textTemplate: '$number(n)' }] },
    });
    const port = await freePort();
    fs.writeFileSync(file, JSON.stringify(config('info')));
    const lines: Record<string, unknown>[] = [];
    const running = await start(loadConfig(file, {}), createLogger('info', { write: (l: string) => void lines.push(JSON.parse(l)) }), { levelFixedBy });
    runs.push(running);
    /** The lines logged while the request runs (the access log's `request` line is info, a failure's cause debug). */
    const linesOfOneRequest = async () => {
      const from = lines.length;
      expect((await call(`${running.listener.url}/hooks/bad`, { token: TOKEN, json: { n: 'x' } })).status).to.equal(500);
      return lines.slice(from).filter((l) => l.route === 'mapping:bad');
    };
    const reloadTo = async (level: string) => {
      fs.writeFileSync(file, JSON.stringify(config(level)));
      expect(await running.reload()).to.equal(true);
    };
    return { lines, linesOfOneRequest, reloadTo };
  }

  const levels = (ls: Record<string, unknown>[]) => [...new Set(ls.map((l) => l.level))].sort();

  it('info → debug → warn: each reload changes what is logged, with no "needs a restart" warning', async () => {
    const gw = await gateway();
    expect(levels(await gw.linesOfOneRequest())).to.deep.equal([30, 40]); // the access line, the failure's warn
    await gw.reloadTo('debug');
    expect(levels(await gw.linesOfOneRequest())).to.deep.equal([20, 30, 40]); // and the cause, at debug
    await gw.reloadTo('warn');
    expect(levels(await gw.linesOfOneRequest())).to.deep.equal([40]);
    expect(gw.lines.filter((l) => String(l.msg).includes('needs a restart'))).to.deep.equal([]);
  });

  it('kept when --log-level sets it, with a warning that says so', async () => {
    const gw = await gateway('--log-level');
    await gw.reloadTo('debug');
    expect(levels(await gw.linesOfOneRequest())).to.deep.equal([30, 40]);
    expect(gw.lines.find((l) => l.key === 'log.level')).to.include({ level: 40, msg: 'config reload: log.level changed, but --log-level sets the level; keeping info' });
  });
});
