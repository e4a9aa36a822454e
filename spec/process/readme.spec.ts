import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { expect } from 'chai';
import { runCli } from '../support/cli.js';
import { BIN, ROOT, freePort, sleep, tmpDir } from '../support/gateway.js';
import { ANSWERING, blocks, COOKBOOK, QUICK_START, sectionText } from '../support/markdown.js';

const run = promisify(execFile);

/**
 * Runs a shell block of the docs with bash, the docs' port replaced by `port`; resolves with the
 * JSON values it printed (`curl -s` ends its output without a newline, so they may share a line).
 */
async function sh(script: string, port: number, cwd: string, env: Record<string, string> = {}): Promise<any[]> {
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script.replaceAll('8788', String(port))], { cwd, env: { ...process.env, ...env } });
  const values: unknown[] = [];
  let rest = stdout.trim();
  while (rest !== '') {
    const end = [...rest.matchAll(/}/g)].map((m) => m.index! + 1).find((i) => isJson(rest.slice(0, i)));
    if (end === undefined) throw new Error(`not JSON: ${rest.slice(0, 200)}`);
    values.push(JSON.parse(rest.slice(0, end)));
    rest = rest.slice(end).trim();
  }
  return values;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

async function waitHealthy(port: number, proc: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20000;
  while (!(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the gateway did not start:\n${output()}`);
    await sleep(50);
  }
}

/**
 * The README's commands, run as written: the quick start on a copy of the example config, and
 * the cookbook's mappings in one config (checked, tried with `hookrelay test`, and its curl line
 * sent to a real listener). A README edit that breaks them fails here.
 */
describe('README: the quick start and the cookbook run as written', function () {
  this.timeout(60000);
  const procs: ChildProcess[] = [];
  after(() => procs.forEach((p) => p.kill('SIGTERM')));

  it('quick start: npm start on the example, then the curl lines', async () => {
    const [install, startBlock] = blocks(QUICK_START, 'sh');
    expect(install).to.match(/^npm install\nnpm start /);
    const dir = tmpDir();
    fs.copyFileSync(path.join(ROOT, 'hookrelay.example.yaml'), path.join(dir, 'hookrelay.example.yaml'));
    fs.cpSync(path.join(ROOT, 'transforms'), path.join(dir, 'transforms'), { recursive: true });
    // `npm start` is package.json's start script, run in the folder (as npm runs it in the repo).
    const script: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;
    const port = await freePort();
    const [bin, ...argv] = script.replace(/^exec /, '').replace('src/bin.mjs', BIN).split(' ');
    const env = { ...process.env, HOOKRELAY_CONFIG: '', HOOKRELAY_TOKEN: '' };
    const proc = spawn(bin!, [...argv, '--port', String(port)], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push(proc);
    let out = '';
    proc.stdout!.on('data', (d) => { out += d; });
    proc.stderr!.on('data', (d) => { out += d; });
    await waitHealthy(port, proc, () => out);
    expect(out).to.include('.hookrelay/token');

    const [wake, events] = await sh(startBlock!, port, dir);
    expect(wake).to.include({ ok: true, mode: 'next-heartbeat' });
    expect(events.events.map((e: { text: string }) => e.text)).to.include('disk almost full');
  });


  it("cookbook: its mappings load, each renders what it says, and its curl line is accepted", async () => {
    const yamls = blocks(COOKBOOK, 'yaml');
    expect(yamls.length).to.be.at.least(4);
    expect(yamls[0]).to.match(/^hooks:\n {2}mappings:\n/);
    const dir = tmpDir();
    const port = await freePort();
    const token = 'readme-cookbook-token-0123456789';
    // The cookbook's mappings, in one config of a user who also configured Telegram.
    const config = `server: { port: ${port} }\ndataDir: ./data\nproviders: { telegram: { botToken: "123:abc" } }\n${yamls.join('')}`;
    const env = { HOOKRELAY_CONFIG: '', HOOKRELAY_TOKEN: token, GITHUB_WEBHOOK_SECRET: 'gh-secret' };
    fs.writeFileSync(path.join(dir, 'hookrelay.yaml'), config.replace('hooks:\n', `hooks:\n  token: \${HOOKRELAY_TOKEN}\n`));
    const cli = async (...args: string[]) => {
      const r = await runCli(args, env, dir);
      expect(r.code, r.stderr).to.equal(0);
      return r;
    };

    await cli('check');

    // The body in the CI mapping's comment is the ci.json the README's lines use.
    const ciBody = /# body: (\{.*\})/.exec(yamls.join(''))![1]!;
    fs.writeFileSync(path.join(dir, 'ci.json'), ciBody);
    const tryLine = /`(npx hookrelay test [^`]+)`/.exec(sectionText(COOKBOOK))![1]!;
    const [, , ...tryArgs] = tryLine.split(' ');
    const ci = JSON.parse((await cli(...tryArgs)).stdout);
    expect(ci).to.include({ mapping: 'ci', action: 'wake', text: 'Build 981 of acme/api is red', mode: 'next-heartbeat' });

    const tried = async (name: string, payload: unknown, ...extra: string[]) => {
      fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(payload));
      return JSON.parse((await cli('test', name, '--payload', `${name}.json`, ...extra)).stdout);
    };
    const push = { ref: 'refs/heads/main', repository: { full_name: 'acme/api', id: 7 }, pusher: { name: 'ada' }, head_commit: { message: 'fix' }, commits: [{ id: 'c1' }] };
    expect(await tried('github', push, '--header', 'x-github-event=push')).to.include({
      mapping: 'github-push', action: 'agent', sessionKey: 'hook:github:7', message: 'Push to acme/api (refs/heads/main) by ada:\nfix\nFirst commit: c1',
    });
    expect(await tried('contact', { name: 'Bo', email: 'bo@x.org', message: 'hi' }, '--header', 'content-type=application/json')).to.include({
      mapping: 'contact', name: 'Contact form', message: 'Message from Bo <bo@x.org>: hi', provider: 'telegram', to: '123456789',
    });
    const alerts = await tried('alerts', { host: 'db1', alerts: [{ title: 'disk' }, { title: 'cpu' }] });
    expect(alerts.actions.map((a: { text: string }) => a.text)).to.deep.equal(['Alert 0: disk on db1', 'Alert 1: cpu on db1']);

    const proc = spawn(BIN, ['serve'], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push(proc);
    let out = '';
    proc.stderr!.on('data', (d) => { out += d; });
    await waitHealthy(port, proc, () => out);
    const [curlBlock] = blocks(COOKBOOK, 'sh');
    const [answer] = await sh(curlBlock!, port, dir, env);
    expect(answer).to.include({ ok: true, action: 'wake' });
  });

  it('answering senders: the github-other catch-all after the cookbook\'s github-push answers a signed GitHub ping 204, with no token, as GitHub sends it', async () => {
    const [pushBlock] = blocks(COOKBOOK, 'yaml');
    const [answering] = blocks(ANSWERING, 'yaml');
    expect(answering).to.match(/^ {4}- id: github-other/);
    const dir = tmpDir();
    const port = await freePort();
    const secret = 'readme-github-secret';
    const env = { HOOKRELAY_CONFIG: '', HOOKRELAY_TOKEN: 'readme-answering-token-0123456789', GITHUB_WEBHOOK_SECRET: secret };
    const config = `server: { port: ${port} }\ndataDir: ./data\n${pushBlock!.replace('hooks:\n', 'hooks:\n  token: ${HOOKRELAY_TOKEN}\n')}${answering}`;
    fs.writeFileSync(path.join(dir, 'hookrelay.yaml'), config);
    const proc = spawn(BIN, ['serve'], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push(proc);
    let out = '';
    proc.stderr!.on('data', (d) => { out += d; });
    await waitHealthy(port, proc, () => out);
    const deliver = async (event: string, body: string) => fetch(`http://127.0.0.1:${port}/hooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-hub-signature-256': await githubSign(secret, body) },
      body,
    });
    expect((await deliver('ping', '{"zen":"Design for failure.","hook_id":1}')).status).to.equal(204);
    expect((await deliver('issues', '{"action":"opened"}')).status).to.equal(204);
    const push = { ref: 'refs/heads/main', repository: { full_name: 'acme/api', id: 7 }, pusher: { name: 'ada' }, head_commit: { message: 'fix' }, commits: [{ id: 'c1' }] };
    expect((await deliver('push', JSON.stringify(push))).status).to.equal(202);
  });
});
