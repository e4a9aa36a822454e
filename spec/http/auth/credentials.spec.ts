import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/log.js';
import { start, type Running } from '../../../src/serve.js';
import { ADMIN_TOKEN, call, freePort, tmpDir, until } from '../../support/gateway.js';
import { TOKEN } from '../../support/in-process.js';

const SCOPED = 'scoped-wake-and-gh-token-0123456789';
const CI = 'scoped-ci-token-0123456789abcdef';
const wake = (id: string, extra: Record<string, unknown> = {}) => ({ id, match: { path: id }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: `${id} {{n}}`, ...extra });
const configOf = (port: number, dir: string, tokens: unknown[]) => ({
  server: { host: '127.0.0.1', port, adminToken: ADMIN_TOKEN },
  dataDir: path.join(dir, 'data'),
  hooks: { tokens, mappings: [wake('gh'), wake('ci')] },
  agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
  heartbeat: { everySeconds: 3600 },
});
const ALL_TOKENS = [
  TOKEN,
  { token: SCOPED, name: 'github-bot', routes: ['wake', 'gh'] },
  { token: CI, name: 'ci', routes: ['ci'] },
];

/** The two kinds of credential and scoped hooks tokens (CONTRACT.md §4, §11). */
describe('http: two kinds of credential, scoped hooks tokens (CONTRACT.md §4)', function () {
  this.timeout(30000);
  let running: Running;
  let base: string;
  let file: string;
  let dir: string;
  const lines: string[] = [];
  const accessLines = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');

  before(async () => {
    dir = tmpDir();
    file = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(file, JSON.stringify(configOf(await freePort(), dir, ALL_TOKENS)));
    running = await start(loadConfig(file, {}), createLogger('info', { write: (line: string) => void lines.push(line) }));
    base = running.listener.url;
  });
  after(() => running.stop());

  const send = (sub: string, token: string, json: unknown = { text: 'hi', mode: 'next-heartbeat', n: 1 }) => call(`${base}/hooks/${sub}`, { token, json });
  /** Every read and operate route, in more than one spelling of its path. */
  const READS = [
    '/hooks/events', '/hooks//events', '/%68ooks/events', '/x/../hooks/events',
    '/hooks/runs', '/hooks/runs/', '/%68ooks/runs', '/hooks/runs/no-such-run', '/hooks/./runs/no-such-run',
    '/metrics', '//metrics', '/%6detrics',
  ];

  it('counts wrong-kind attempts toward the 429 budget; only a credential valid for the route escapes it, clearing its own kind', async () => {
    // First in this block, so that nothing is counted from this address yet: a right credential
    // clears only its own kind's failures, and none clears a guess where no route exists.
    const from = { 'x-forwarded-for': '1' }; // not believed (no trusted proxy): every try is 127.0.0.1's
    expect((await call(`${base}/hooks/events`, { token: ADMIN_TOKEN, headers: from })).status).to.equal(200);
    for (let i = 0; i < 10; i++) expect((await call(`${base}/hooks/events`, { token: TOKEN })).status).to.equal(401);
    for (let i = 0; i < 10; i++) expect((await send('wake', ADMIN_TOKEN)).status).to.equal(401);
    const limited = await call(`${base}/hooks/events`, { token: TOKEN });
    expect(limited.status).to.equal(429);
    expect(limited.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await send('wake', ADMIN_TOKEN)).status).to.equal(429);
    // A credential of the kind the route takes escapes the budget and clears that kind's share
    // of it — a scoped token's 403 too (a valid credential, never counted) — and only that:
    // 11 admin-token failures remain.
    expect((await send('agent', CI, { message: 'x' })).status).to.equal(403);
    expect((await send('wake', ADMIN_TOKEN)).status).to.equal(401);
    expect((await call(`${base}/hooks/runs`, { token: ADMIN_TOKEN })).status).to.equal(200);
    for (let i = 0; i < 19; i++) expect((await call(`${base}/metrics`, { token: TOKEN })).status).to.equal(401);
    expect((await call(`${base}/metrics`, { token: TOKEN })).status).to.equal(429);
    expect((await call(`${base}/hooks/runs`, { token: ADMIN_TOKEN })).status).to.equal(200);
    expect((await call(`${base}/metrics`, { token: TOKEN })).status).to.equal(401);
    expect((await call(`${base}/metrics`, { token: ADMIN_TOKEN })).status).to.equal(200);
  });

  it('answers every read route 401 to a hooks token (saying it takes the admin token), and to the admin token with its page', async () => {
    for (const p of READS) {
      for (const token of [TOKEN, SCOPED]) {
        const r = await call(`${base}${p}`, { token });
        expect(r.status, `${p} with a hooks token`).to.equal(401);
        expect(r.data.error.code).to.equal('unauthorized');
        expect(r.data.error.message, p).to.match(/admin token/);
        expect(r.text).to.not.include(token);
      }
      const r = await call(`${base}${p}`, { token: ADMIN_TOKEN });
      expect(r.status, `${p} with the admin token`).to.equal(p.includes('no-such-run') ? 404 : 200);
    }
  });

  it('signs into the console with the admin token only', async () => {
    const signIn = (token: string) => fetch(`${base}/console/login`, {
      method: 'POST', redirect: 'manual',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    const hooks = await signIn(TOKEN);
    expect(hooks.status).to.equal(401);
    const page = await hooks.text();
    expect(page).to.include('admin token').and.include('admin-token');
    expect(page).to.not.include(TOKEN);
    const admin = await signIn(ADMIN_TOKEN);
    expect(admin.status).to.equal(303);
    expect(admin.headers.get('set-cookie')).to.match(/^hookrelay_console=/);
  });

  it('answers the admin token 401 on every send route (saying it takes a hooks token)', async () => {
    for (const sub of ['wake', 'agent', 'gh', '/%77ake']) {
      const r = await send(sub, ADMIN_TOKEN, { text: 'x', message: 'x', n: 1 });
      expect(r.status, sub).to.equal(401);
      expect(r.data.error.message, sub).to.match(/hooks token/);
    }
    expect((await send('wake', TOKEN)).status).to.equal(200);
  });

  it('gets either credential the usual 404 where no route exists, and never answers one without', async () => {
    for (const token of [TOKEN, ADMIN_TOKEN, SCOPED]) {
      const r = await call(`${base}/hooks/`, { token });
      expect(r.status, token).to.equal(404);
    }
    expect((await call(`${base}/hooks/`, { token: null })).status).to.equal(401);
    expect((await call(`${base}/hooks/%zz`, { token: ADMIN_TOKEN })).status).to.equal(400);
    expect((await call(`${base}/hooks/%zz`, { token: null })).status).to.equal(401);
  });

  it('a scoped token: its routes 200, another send route 403 forbidden, no route 404, a read route 401', async () => {
    expect((await send('wake', SCOPED)).status).to.equal(200);
    expect((await send('gh', SCOPED)).status).to.equal(200);
    const agent = await send('agent', SCOPED, { message: 'x' });
    expect(agent.status).to.equal(403);
    expect(agent.data.error.code).to.equal('forbidden');
    expect(agent.data.error.message).to.include('routes');
    const other = await send('ci', SCOPED);
    expect(other.status, other.text).to.equal(403);
    expect(other.data.error.code).to.equal('forbidden');
    expect(other.data.error.message).to.include('"ci"');
    const unmatched = await send('nothing-here', SCOPED);
    expect(unmatched.status).to.equal(404);
    expect(unmatched.data.error.code).to.equal('no_mapping');
    expect((await call(`${base}/hooks/events`, { token: SCOPED })).status).to.equal(401);
    expect((await send('ci', CI)).status).to.equal(200);
    expect((await send('wake', CI)).status).to.equal(403);
  });

  it('names the sender (never the token) in the request log, the access log and the console request page', async () => {
    const r = await send('gh', SCOPED, { n: 42 });
    expect(r.status).to.equal(200);
    const reqId = r.headers.get('x-request-id')!;
    const line = await until('the access line', async () => accessLines().find((l) => l.reqId === reqId));
    expect(line.sender).to.equal('github-bot');
    const plain = await send('wake', TOKEN);
    const plainLine = await until('the plain access line', async () => accessLines().find((l) => l.reqId === plain.headers.get('x-request-id')));
    expect(plainLine).to.not.have.property('sender');
    expect(lines.join('\n')).to.not.include(SCOPED).and.not.include(CI);

    // The request log, as the console shows it.
    const login = await fetch(`${base}/console/login`, {
      method: 'POST', redirect: 'manual',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = (p: string) => fetch(`${base}${p}`, { headers: { cookie } }).then((x) => x.text());
    // Filtered to the mapping: the other specs' refusals, written in batches, may push it off the first page.
    const list = await until('the row in the list', async () => {
      const html = await page('/console/requests?route=mapping:gh');
      return html.includes('github-bot') ? html : undefined;
    });
    expect(list).to.not.include(SCOPED);
    const seqs = [...list.matchAll(/href="\/console\/requests\/(\d+)"/g)].map((m) => m[1]!);
    let detail: string | undefined;
    for (const seq of seqs) {
      const html = await page(`/console/requests/${seq}`);
      if (html.includes(reqId)) detail = html;
    }
    expect(detail, 'the request page').to.include('Sender').and.include('github-bot');
    expect(detail).to.not.include(SCOPED);
  });

  it('revokes a removed entry at the reload, and keeps the others', async () => {
    expect((await send('ci', CI)).status).to.equal(200);
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), hooks: { tokens: ALL_TOKENS.slice(0, 2), mappings: [wake('gh'), wake('ci')] } }));
    expect(await running.reload()).to.equal(true);
    expect((await send('ci', CI)).status).to.equal(401);
    expect((await send('gh', SCOPED)).status).to.equal(200);
    expect((await call(`${base}/hooks/events`, { token: ADMIN_TOKEN })).status).to.equal(200);
  });

  it('takes a new admin token at the reload too (rotation), unlike the other server keys', async () => {
    const second = 'second-admin-token-0123456789abcdef';
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...config, server: { ...config.server, adminToken: undefined, adminTokens: [second, ADMIN_TOKEN] } }));
    expect(await running.reload()).to.equal(true);
    expect((await call(`${base}/metrics`, { token: second })).status).to.equal(200);
    expect((await call(`${base}/metrics`, { token: ADMIN_TOKEN })).status).to.equal(200);
    fs.writeFileSync(file, JSON.stringify({ ...config, server: { ...config.server, adminToken: second } }));
    expect(await running.reload()).to.equal(true);
    expect((await call(`${base}/metrics`, { token: ADMIN_TOKEN })).status).to.equal(401);
    expect((await call(`${base}/hooks/runs`, { token: second })).status).to.equal(200);
    expect(lines.filter((l) => l.includes('needs a restart'))).to.deep.equal([]);
    expect(lines.join('\n')).to.not.include(second);
  });
});
