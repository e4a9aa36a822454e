import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { lockDataDir } from '../../../src/store/sqlite-lock.js';
import { ROOT, freePort, tmpDir, until } from '../../support/gateway.js';

/** The pid the data directory's lock holder wrote (user_version, offset 60 of hookrelay.lock: src/store/sqlite-lock.ts). */
function lockHolder(dataDir: string): number | undefined {
  try {
    const pid = fs.readFileSync(path.join(dataDir, 'hookrelay.lock')).readInt32BE(60);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const portFree = (port: number) => new Promise<boolean>((resolve) => {
  const s = net.createServer();
  s.once('error', () => resolve(false));
  s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
});

/**
 * `npm start` stopped the way supervisors stop a service (systemd, Docker, CI: SIGTERM to the
 * process they started, which is npm): the gateway itself gets the signal, drains and exits
 * (CONTRACT.md §2), so the port and the data directory are free for the next start.
 */
describe('npm start: SIGTERM to npm stops the gateway', function () {
  this.timeout(60_000);

  it('the gateway drains and exits: its process is gone, the port is free and the data directory unlocked', async () => {
    const dir = tmpDir('hookrelay-npm-start-');
    const port = await freePort();
    const dataDir = path.join(dir, 'data');
    const file = path.join(dir, 'hookrelay.yaml');
    fs.writeFileSync(file, `server: { host: 127.0.0.1, port: ${port} }\ndataDir: ${dataDir}\nhooks: { token: npm-start-token-0123456789 }\nheartbeat: { everySeconds: 3600 }\n`);
    // --ignore-scripts: `start` without `prestart`, whose build would replace dist/ under
    // other spec runs (mocha built it already: spec/support/build-first.ts).
    const npm = spawn('npm', ['start', '--ignore-scripts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOOKRELAY_CONFIG: file } });
    let log = '';
    npm.stdout!.on('data', (d) => { log += d; });
    npm.stderr!.on('data', (d) => { log += d; });
    let gateway: number | undefined;
    try {
      await until(() => `npm start to become healthy:\n${log.slice(-3000)}`, async () => {
        if (npm.exitCode !== null) throw new Error(`npm exited ${npm.exitCode}:\n${log.slice(-3000)}`);
        return fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      });
      gateway = lockHolder(dataDir);
      expect(gateway, 'the gateway wrote its pid into the lock').to.be.a('number');
      expect(gateway).not.to.equal(npm.pid);

      npm.kill('SIGTERM');
      await until(() => `the gateway (pid ${gateway}) to exit:\n${log.slice(-3000)}`, () => !alive(gateway!), 10_000);
      await until(`port ${port} to be free`, () => portFree(port), 5_000);
      lockDataDir(dataDir).release(); // throws `locked` while anyone holds it
      await until(() => `the drain's last line:\n${log.slice(-3000)}`, () => log.includes('"msg":"stopped"'), 5_000);
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      if (gateway !== undefined && alive(gateway)) process.kill(gateway, 'SIGKILL');
    }
  });
});
