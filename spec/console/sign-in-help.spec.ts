import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ROOT, freePort, startGateway, tmpDir, type Gateway } from '../support/gateway.js';

const run = promisify(execFile);

/**
 * Issue 32: the sign-in page did not say where the generated admin token is, and signing in
 * with curl needed an Origin header that no page mentioned. The page names the file (or the
 * config key), never the token; docs/console.md's curl lines are run here exactly as written.
 */
describe('console: where the admin token is, and signing in with curl as docs/console.md shows', function () {
  this.timeout(60000);
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  const loginPage = async (g: Gateway) => (await fetch(`${g.base}/console/login`)).text();

  it('a generated admin token: the page names its file, never the token', async () => {
    const dir = tmpDir();
    gw = await startGateway({ server: { port: await freePort(), adminToken: null }, dataDir: './data', hooks: { token: 'sign-in-hooks-token' } }, { dir });
    const file = path.join(fs.realpathSync(dir), 'data', 'admin-token');
    const page = await loginPage(gw);
    expect(page).to.include(`This server generated its admin token: it is in the file <code>${file}</code>`);
    expect(page).not.to.include(gw.adminToken);
  });

  it('a configured admin token: the page names the key and the config file, never the token', async () => {
    gw = await startGateway({ server: { port: await freePort(), adminToken: 'configured-admin-token-0123456789' }, hooks: { token: 'sign-in-hooks-token' } });
    const page = await loginPage(gw);
    expect(page).to.include(`This server's admin token is <code>server.adminToken</code> in <code>${fs.realpathSync(gw.configFile)}</code>.`);
    expect(page).not.to.include('configured-admin-token-0123456789');
  });

  it('the curl lines of docs/console.md sign in (303) and read a page; without Origin: 403 cross_origin', async () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/console.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Signing in from a script'));
    const script = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const dir = tmpDir();
    const port = await freePort();
    // As the example config: the generated admin token in ./.hookrelay, next to the config.
    gw = await startGateway({ server: { port, adminToken: null }, dataDir: './.hookrelay', hooks: { token: 'sign-in-hooks-token' } }, { dir });
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script.replaceAll('8788', String(port))], { cwd: dir });
    expect(stdout.startsWith('303\n'), stdout.slice(0, 300)).to.equal(true);
    expect(stdout).to.include('<h1>Events</h1>');

    const withoutOrigin = script.split('\n').filter((l) => !l.includes('Origin:')).join('\n').replace(/\ncurl -s -b[^\n]*/, '');
    const refused = await run('bash', ['-euo', 'pipefail', '-c', withoutOrigin.replaceAll('8788', String(port))], { cwd: dir });
    expect(refused.stdout.trim()).to.equal('403');
  });
});
