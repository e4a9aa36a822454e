import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ADMIN_TOKEN, BIN, call, freePort, ROOT, startGateway, tmpDir, until } from '../../support/gateway.js';
import { TOKEN } from '../../support/in-process.js';

const run = promisify(execFile);

const SCOPED = 'scoped-wake-and-gh-token-0123456789';
const wake = (id: string, extra: Record<string, unknown> = {}) => ({ id, match: { path: id }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: `${id} {{n}}`, ...extra });

describe('cli: the admin token in check and serve (CONTRACT.md §4)', function () {
  this.timeout(60000);

  const write = (config: unknown, dir = tmpDir()) => {
    const file = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(file, JSON.stringify(config));
    return file;
  };
  const cli = (...args: string[]) => run(BIN, [...args], { cwd: ROOT, timeout: 30000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );

  it('check refuses an admin token equal to a hooks token, naming the YAML path and not the token', async () => {
    const r = await cli('check', '--config', write({ server: { adminTokens: ['a-unique-admin-token-123', TOKEN] }, hooks: { tokens: [{ token: TOKEN, routes: ['wake'] }] } }));
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/server\.adminTokens\[1\]: is also a hooks token/);
    expect(r.stderr + r.stdout).to.not.include(TOKEN);
  });

  it('check refuses a routes entry that names no mapping, with its YAML path', async () => {
    const r = await cli('check', '--config', write({ server: { adminToken: ADMIN_TOKEN }, hooks: { tokens: [TOKEN, { token: SCOPED, routes: ['wake', 'gh', 'github'] }], mappings: [wake('gh')] } }));
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/hooks\.tokens\[1\]\.routes\[2\]: "github" names no route/);
    // A preset's mapping id is a route too.
    const ok = await cli('check', '--config', write({ server: { adminToken: ADMIN_TOKEN }, hooks: { tokens: [{ token: SCOPED, routes: ['email'] }], presets: ['email'] } }));
    expect(ok.code, ok.stderr).to.equal(0);
  });

  it('check warns about tokens and verify secrets shorter than 16 characters on a non-loopback host only', async () => {
    const config = (host: string) => ({
      server: { host, adminToken: 'short-admin' },
      hooks: { tokens: [TOKEN, { token: 'short', name: 'x', routes: ['wake'] }], mappings: [wake('gh', { verify: { scheme: 'github', secret: 'tiny' } })] },
    });
    const open = await cli('check', '--config', write(config('0.0.0.0')));
    expect(open.code, open.stderr).to.equal(0);
    const warnings = open.stderr.split('\n').filter((l) => l.includes('shorter than 16'));
    expect(warnings.map((l) => l.split(' ')[1])).to.deep.equal(['hooks.tokens[1]', 'server.adminToken', 'hooks.mappings[0].verify.secret']);
    expect(open.stderr).to.not.include('short-admin');
    const loopback = await cli('check', '--config', write(config('127.0.0.1')));
    expect(loopback.stderr).to.not.include('shorter than 16');
  });

  it('serve on a loopback host without an admin token generates {dataDir}/admin-token (mode 0600), says where, and reuses it', async () => {
    const dir = tmpDir();
    const config = { server: { port: await freePort(), adminToken: null }, dataDir: './data', hooks: { token: TOKEN } };
    const file = path.join(dir, 'data', 'admin-token');
    let gw = await startGateway(config, { dir });
    let admin: string;
    try {
      admin = fs.readFileSync(file, 'utf8').trim();
      expect(admin).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(gw.adminToken).to.equal(admin);
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      // The line and /healthz's answer come over different pipes: either may arrive first.
      await until('the admin token line', () => gw.output().includes(`using the admin token in ${file} (mode 0600)`));
      expect(gw.output()).to.not.include(admin);
      expect((await call(`${gw.hooks}/events`, { token: admin })).status).to.equal(200);
      expect((await call(`${gw.hooks}/events`, { token: TOKEN })).status).to.equal(401);
    } finally {
      await gw.stop();
    }
    gw = await startGateway(config, { dir });
    try {
      expect(fs.readFileSync(file, 'utf8').trim()).to.equal(admin);
      expect((await call(`${gw.base}/metrics`, { token: admin })).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });

  it('serve on a non-loopback host without an admin token refuses to start, saying what to set', async () => {
    const r = await cli('serve', '--config', write({ server: { host: '0.0.0.0', port: await freePort() }, hooks: { token: TOKEN } }));
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/server\.adminToken: is required when server\.host \(0\.0\.0\.0\) is not a loopback address: set HOOKRELAY_ADMIN_TOKEN/);
  });
});
