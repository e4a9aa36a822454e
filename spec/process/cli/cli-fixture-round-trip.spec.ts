import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { runCli } from '../../support/cli.js';
import { BIN, ROOT, freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';

const run = (args: string[]) => runCli(args);

function bin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const SECRET = 'round-trip-github-secret';
const SENDER_TOKEN = 'sender-token-5b8f0c2e9d';
const COOKIE = 'session=cookie-value-31ad';

/**
 * A real delivery becomes a regression test (CONTRACT.md §13): a GitHub delivery signed with
 * @octokit/webhooks-methods reaches a real gateway process that keeps bodies; `hookrelay
 * requests` lists it; `hookrelay fixture SEQ` writes it as a fixture with no credential or
 * signature left; `hookrelay test --fixtures` passes on it; the console offers the same file.
 */
describe('cli: hookrelay requests, hookrelay fixture SEQ and the console\'s download', function () {
  this.timeout(60_000);
  const dir = tmpDir();
  let gw: Gateway;
  let seq: { github: number; refused: number; note: number; ask: number };

  before(async () => {
    gw = await startGateway({
      server: { port: await freePort() },
      dataDir: path.join(dir, 'data'),
      hooks: {
        tokens: [{ token: SENDER_TOKEN, name: 'github-app' }],
        keepBodies: 7,
        mappings: [
          { id: 'gh', match: { path: 'github', headers: { 'x-github-event': 'push' } }, action: 'agent', name: 'GitHub', messageTemplate: 'Push to {{repository.full_name}}: {{head_commit.message}}', sessionKey: 'hook:github:{{repository.id}}', verify: { scheme: 'github', secret: SECRET } },
          { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}}' },
          { id: 'ask', match: { path: 'ask' }, action: 'agent', messageTemplate: 'asked: {{q}}' },
        ],
      },
    }, { dir });
    const delivery = JSON.stringify({ ref: 'refs/heads/main', repository: { id: 42, full_name: 'acme/api' }, head_commit: { message: 'Fix the build' } });
    const signature = await githubSign(SECRET, delivery);
    const github = await fetch(`${gw.hooks}/github?source=ci`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${SENDER_TOKEN}`, cookie: COOKIE, 'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/abc123',
        'x-github-event': 'push', 'x-hub-signature-256': signature,
      },
      body: delivery,
    });
    expect(github.status).to.equal(202);
    // Refused (a wrong signature): its body is never kept.
    const refused = await fetch(`${gw.hooks}/github`, { method: 'POST', headers: { authorization: `Bearer ${SENDER_TOKEN}`, 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, body: delivery });
    expect(refused.status).to.equal(401);
    const note = await fetch(`${gw.hooks}/note`, { method: 'POST', headers: { authorization: `Bearer ${SENDER_TOKEN}` }, body: '{"n": 3}' });
    expect(note.status).to.equal(200);
    const ask = await fetch(`${gw.hooks}/ask`, { method: 'POST', headers: { authorization: `Bearer ${SENDER_TOKEN}` }, body: '{"q": "why"}' });
    expect(ask.status).to.equal(202);
    // The refusal's row is buffered: wait until all four are listed.
    const listed = await until(() => 'four rows in `hookrelay requests --json`', async () => {
      const r = await run(['requests', '--json', '--config', gw.configFile]);
      const rows = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      return rows.length === 4 ? rows : undefined;
    }, 30_000);
    const find = (route: string | undefined, s: number) => listed.find((r: { status: number; route: string }) => r.status === s && (route === undefined || r.route === route)).seq as number;
    seq = { github: find('mapping:gh', 202), refused: find(undefined, 401), note: find('mapping:note', 200), ask: find('mapping:ask', 202) };
  });
  after(() => gw?.stop());

  it('hookrelay requests: the log, newest first — seq, time, route or mapping, status, the token\'s name; beside the running server', async () => {
    const r = await bin(['requests', '--config', gw.configFile]);
    expect(r.code).to.equal(0);
    const [head, ...lines] = r.stdout.trim().split('\n');
    expect(head).to.match(/^SEQ +TIME +METHOD +ROUTE +STATUS +SENDER +NOTES$/);
    expect(lines).to.have.length(4);
    expect(lines.map((l) => Number(/^#(\d+) /.exec(l)![1]))).to.deep.equal([...Object.values(seq)].sort((a, b) => b - a));
    const github = lines.find((l) => l.startsWith(`#${seq.github} `))!;
    expect(github).to.match(new RegExp(`^#${seq.github} +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z +POST +mapping:gh +202 +github-app +body kept$`));
    expect(lines.find((l) => l.startsWith(`#${seq.refused} `))).to.match(/POST +\S+ +401 .* invalid_signature$/);
    const limited = await run(['requests', '--limit', '1', '--config', gw.configFile]);
    expect(limited.stdout.trim().split('\n')).to.have.length(2); // the headers and one row
    expect((await run(['requests', '--limit', '0', '--config', gw.configFile])).code).to.equal(1);
  });

  it('hookrelay fixture SEQ: no token or signature left anywhere; sign: true and today\'s outcome as expect; test --fixtures passes on it', async () => {
    const out = path.join(dir, 'fixtures', 'github-push.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    // The log kept the request's headers and query with its body (hooks.keepBodies), credentials removed.
    const r = await bin(['fixture', String(seq.github), '--out', out, '--config', gw.configFile]);
    expect(r.stderr).to.include(`wrote ${out}`).and.not.include('note:');
    expect(r.code).to.equal(0);
    const text = fs.readFileSync(out, 'utf8');
    for (const secret of [SENDER_TOKEN, SECRET, COOKIE, 'cookie-value', 'sha256=', 'authorization', 'x-hub-signature', 'token', 'signature']) {
      expect(text.toLowerCase(), secret).to.not.include(secret.toLowerCase());
    }
    const fixture = JSON.parse(text);
    // Beside the sender's own headers, what its HTTP client added (accept, …); never the connection's.
    expect(fixture.request.headers).to.include({ 'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/abc123', 'x-github-event': 'push' });
    expect(fixture.request.headers).to.not.have.any.keys('host', 'content-length', 'connection', 'transfer-encoding', 'cookie', 'authorization', 'x-hub-signature-256');
    expect(fixture).to.deep.equal({
      name: `request #${seq.github} to /hooks/github`,
      request: {
        path: 'github',
        method: 'POST',
        headers: fixture.request.headers,
        query: { source: 'ci' },
        body: { ref: 'refs/heads/main', repository: { id: 42, full_name: 'acme/api' }, head_commit: { message: 'Fix the build' } },
      },
      sign: true,
      expect: {
        status: 202,
        action: { mapping: 'gh', action: 'agent', message: 'Push to acme/api: Fix the build', name: 'GitHub', sessionKey: 'hook:github:42', wakeMode: 'now', deliver: false, provider: 'last' },
      },
    });
    const t = await bin(['test', '--fixtures', path.dirname(out), '--config', gw.configFile]);
    expect(t.stdout).to.equal(`✓ request #${seq.github} to /hooks/github\n1 passed, 0 failed\n`);
    expect(t.code).to.equal(0);
    // The same file without sign: refused like the real unsigned request.
    fs.writeFileSync(out, JSON.stringify({ ...fixture, sign: undefined }));
    const unsigned = await run(['test', '--fixtures', path.dirname(out), '--config', gw.configFile]);
    expect(unsigned.code).to.equal(1);
    expect(unsigned.stdout).to.include('expected status 202, got 401 (invalid_signature:');
  });

  it('--header overrides a kept header (and gives one a row logged before headers were kept lacks); credentials given with --header are removed too', async () => {
    const r = await run(['fixture', String(seq.github), '--header', 'X-GitHub-Event=ping', '--header', 'Authorization=Bearer x', '--header', 'x-hub-signature-256=sha256=00', '--config', gw.configFile]);
    expect(r.code).to.equal(0);
    expect(r.stderr).to.not.include('note:');
    const fixture = JSON.parse(r.stdout);
    expect(fixture.request.headers).to.include({ 'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/abc123', 'x-github-event': 'ping' });
    expect(fixture.request.headers).to.not.have.any.keys('authorization', 'x-hub-signature-256');
    expect(fixture.expect).to.deep.equal({ status: 404, response: { ok: false, error: { code: 'no_mapping' } } });
  });

  it('leaves out of expect what differs from run to run: a generated hook:<uuid> session key', async () => {
    const r = await run(['fixture', String(seq.ask), '--config', gw.configFile]);
    expect(r.code).to.equal(0);
    expect(JSON.parse(r.stdout).expect).to.deep.equal({ status: 202, action: { mapping: 'ask', action: 'agent', message: 'asked: why', wakeMode: 'now', deliver: false, provider: 'last' } });
  });

  it('a request without a kept body, or no such request: exit 1 saying what to do', async () => {
    const refused = await run(['fixture', String(seq.refused), '--config', gw.configFile]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include(`request #${seq.refused} has no kept body: set hooks.keepBodies`);
    const none = await run(['fixture', '99999', '--config', gw.configFile]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.include('no request #99999 in the request log');
  });

  it('the console\'s request page links the same fixture, a download for a signed-in admin only', async () => {
    const login = await fetch(`${gw.base}/console/login`, {
      method: 'POST', redirect: 'manual',
      headers: { origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: gw.adminToken }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${gw.base}/console/requests/${seq.note}`, { headers: { cookie } })).text();
    expect(page).to.include(`href="/console/fixture/${seq.note}"`);
    const res = await fetch(`${gw.base}/console/fixture/${seq.note}`, { headers: { cookie } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-disposition')).to.equal(`attachment; filename="fixture-${seq.note}.json"`);
    const cli = await run(['fixture', String(seq.note), '--config', gw.configFile]);
    expect(await res.text()).to.equal(cli.stdout);
    expect(JSON.parse(cli.stdout).expect).to.deep.equal({ status: 200, action: { mapping: 'note', action: 'wake', text: 'note 3', mode: 'now' } });
    const anonymous = await fetch(`${gw.base}/console/fixture/${seq.note}`, { redirect: 'manual' });
    expect(anonymous.status).to.equal(303);
    const noBody = await fetch(`${gw.base}/console/fixture/${seq.refused}`, { headers: { cookie } });
    expect(noBody.status).to.equal(409);
    expect(await noBody.text()).to.include('set hooks.keepBodies');
  });
});
