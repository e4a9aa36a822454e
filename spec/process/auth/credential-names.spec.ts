import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { call, freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';
import { ADMIN_TOKEN, TOKEN } from '../../support/in-process.js';

/** The CLI's `main` in this process (spec/process/cli/ runs each command through the bin as well). */
const run = (args: string[]) => runCli(args);

/** Each credential a sender may send, by where it goes; each value unique, so that a leak names itself. */
const CREDENTIAL_HEADERS = ['X-Api-Key', 'Api-Key', 'X-Auth-Token', 'X-Gitlab-Token', 'X-Amz-Security-Token', 'Cookie', 'Proxy-Authorization', 'X-Foo-Secret', 'X-Session-Id', 'X-Password'];
const CREDENTIAL_PARAMS = ['access_token', 'api_key', 'apikey', 'client_secret', 'password'];
/** Headers a proxy (or a browser) fills with the request's URL, the hooks token in its query included. */
const URL_HEADERS = ['Referer', 'X-Forwarded-Uri', 'X-Original-URL', 'X-Rewrite-URL'];
/** Headers that are no credential and still reach templates. */
const HARMLESS: Record<string, string> = { 'User-Agent': 'spec-agent/1.0', 'X-GitHub-Event': 'push', 'Content-Type': 'application/json' };

const valueOf = (name: string) => `leak-${name.toLowerCase()}-7f3a9c`;
const SECRETS = [TOKEN, ...CREDENTIAL_HEADERS.map(valueOf), ...CREDENTIAL_PARAMS.map(valueOf)];
/** The query every request carries: the hooks token, every credential parameter, and one harmless `x=1`. */
const QUERY = `token=${TOKEN}&x=1&${CREDENTIAL_PARAMS.map((p) => `${p}=${valueOf(p)}`).join('&')}`;

function credentialsSent(name: string): Record<string, string> {
  // Lower case, as `call` adds its own `content-type`.
  const headers: Record<string, string> = Object.fromEntries(Object.entries(HARMLESS).map(([h, v]) => [h.toLowerCase(), v]));
  for (const h of CREDENTIAL_HEADERS) headers[h] = valueOf(h);
  for (const h of URL_HEADERS) headers[h] = `https://proxy.example/hooks/${name}?${QUERY}`;
  return headers;
}

/** Fails naming the first credential `text` carries. */
function expectNoCredential(text: string, where: string): void {
  for (const secret of SECRETS) expect(text, `${where} carries ${secret}`).to.not.include(secret);
}

/** What a template or transform was handed: every credential gone, the rest as it came. */
function expectCleanView(seen: { headers: Record<string, string>; query: Record<string, string>; url?: string }, name: string, where: string): void {
  for (const h of CREDENTIAL_HEADERS) expect(seen.headers, `${where}: ${h}`).to.not.have.property(h.toLowerCase());
  for (const p of [...CREDENTIAL_PARAMS, 'token']) expect(seen.query, `${where}: ?${p}`).to.not.have.property(p);
  for (const [h, v] of Object.entries(HARMLESS)) expect(seen.headers[h.toLowerCase()], `${where}: ${h}`).to.equal(v);
  for (const h of URL_HEADERS) expect(seen.headers[h.toLowerCase()], `${where}: ${h}`).to.equal(`https://proxy.example/hooks/${name}?x=1`);
  expect(seen.query, where).to.deep.equal({ x: '1' });
  if (seen.url !== undefined) expect(seen.url, where).to.equal(`/hooks/${name}?x=1`);
}

/** A transform that shows everything it was handed of the request. */
const SPY = 'export default (input) => ({ kind: "wake", text: JSON.stringify({ url: input.url, query: input.query, headers: input.headers }) });\n';
const GITLAB = valueOf('X-Gitlab-Token');

/**
 * CONTRACT.md §8: no credential reaches a template, a transform, the request log, a fixture,
 * the console or a log line — the hooks token in a header that repeats the URL, a header whose
 * name says it holds a credential, a query parameter named like one — over real HTTP, on a
 * real `hookrelay serve` that keeps bodies.
 */
describe('http: no credential, by name or in a repeated URL, reaches templates, transforms, the request log, fixtures, the console or the log', function () {
  this.timeout(60_000);
  const dir = tmpDir();
  let gw: Gateway;
  const events = new Map<string, string>();
  const seqs: Record<string, number> = {};

  before(async () => {
    fs.mkdirSync(path.join(dir, 'transforms'));
    fs.writeFileSync(path.join(dir, 'transforms', 'spy.mjs'), SPY);
    gw = await startGateway({
      server: { port: await freePort() },
      dataDir: path.join(dir, 'data'),
      log: { level: 'debug' },
      hooks: {
        token: TOKEN,
        keepBodies: 7,
        transformsDir: path.join(dir, 'transforms'),
        mappings: [
          { id: 'hb', match: { path: 'hb' }, action: 'wake', textTemplate: '{"headers": {{headers}}, "query": {{query}} }' },
          { id: 'jn', match: { path: 'jn' }, action: 'wake', engine: 'jsonata', textTemplate: '$string({"headers": headers, "query": query})' },
          { id: 'tr', match: { path: 'tr' }, action: 'wake', transform: { module: 'spy.mjs' } },
          // GitLab's webhook secret: a mapping may still match on it, on the request as it came.
          { id: 'gl', match: { path: 'gl', headers: { 'X-Gitlab-Token': GITLAB } }, action: 'wake', textTemplate: '{"headers": {{headers}}, "query": {{query}} }' },
        ],
      },
    }, { dir });
    for (const name of ['hb', 'jn', 'tr', 'gl']) {
      const r = await call(`${gw.hooks}/${name}?${QUERY}`, { headers: credentialsSent(name), json: { n: 1 } });
      expect(r.status, `${name}: ${r.text}`).to.equal(200);
      const list = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
      events.set(name, list.data.events.find((e: { id: string }) => e.id === r.data.eventId).text);
    }
    const listed = await until('the four mapped rows in `hookrelay requests --json`', async () => {
      const r = await run(['requests', '--json', '--config', gw.configFile]);
      const rows = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      return rows.filter((row) => row.route.startsWith('mapping:')).length === 4 ? { rows, stdout: r.stdout } : undefined;
    });
    expectNoCredential(listed.stdout, 'hookrelay requests --json');
    for (const row of listed.rows) if (row.route.startsWith('mapping:')) seqs[row.route.slice('mapping:'.length)] = row.seq;
  });
  after(() => gw?.stop());

  for (const name of ['hb', 'jn', 'tr', 'gl']) {
    it(`${name}: the ${({ hb: 'Handlebars template', jn: 'JSONata template', tr: 'transform', gl: 'template of a mapping that matches on X-Gitlab-Token' } as Record<string, string>)[name]} sees no credential, and the harmless headers and query as they came`, () => {
      const text = events.get(name)!;
      expectNoCredential(text, `${name}'s text`);
      expectCleanView(JSON.parse(text), name, name);
    });
  }

  it('a mapping still matches on a credential header (X-Gitlab-Token) on the request as it came', async () => {
    const wrong = await call(`${gw.hooks}/gl`, { token: TOKEN, headers: { 'x-gitlab-token': 'not-it' }, json: {} });
    expect(wrong.status).to.equal(404);
    expect(wrong.data.error.code).to.equal('no_mapping');
  });

  it('the store (the request log\'s rows, kept heads and bodies, the events) holds no credential', () => {
    const data = path.join(dir, 'data');
    for (const file of fs.readdirSync(data, { recursive: true }) as string[]) {
      const full = path.join(data, file);
      if (fs.statSync(full).isFile()) expectNoCredential(fs.readFileSync(full).toString('latin1'), `the store's ${file}`);
    }
  });

  it('hookrelay fixture SEQ writes no credential, and keeps the harmless headers and query', async () => {
    for (const name of ['hb', 'jn', 'tr']) {
      const r = await run(['fixture', String(seqs[name]), '--config', gw.configFile]);
      expect(r.code, r.stderr).to.equal(0);
      expectNoCredential(r.stdout, `the fixture of ${name}`);
      const fixture = JSON.parse(r.stdout);
      expectCleanView({ headers: fixture.request.headers, query: fixture.request.query }, name, `the fixture of ${name}`);
    }
    // Matched on X-Gitlab-Token, which no fixture holds: nor is it asked for (--header would remove it again).
    const gl = await run(['fixture', String(seqs.gl), '--config', gw.configFile]);
    expect(gl.code, gl.stderr).to.equal(0);
    expectNoCredential(gl.stdout, 'the fixture of gl');
    expect(gl.stderr).to.not.include('x-gitlab-token');
    expect(JSON.parse(gl.stdout).expect).to.deep.equal({ status: 404, response: { ok: false, error: { code: 'no_mapping' } } });
  });

  it('the console\'s request page, its fixture download and the mappings page show no credential', async () => {
    const login = await fetch(`${gw.base}/console/login`, {
      method: 'POST', redirect: 'manual',
      headers: { origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    for (const name of ['hb', 'tr']) {
      const page = await (await fetch(`${gw.base}/console/requests/${seqs[name]}`, { headers: { cookie } })).text();
      expect(page).to.include('x-github-event: push').and.include(`referer: https://proxy.example/hooks/${name}?x=1`);
      expectNoCredential(page, `the console's page of ${name}`);
      expectNoCredential(await (await fetch(`${gw.base}/console/fixture/${seqs[name]}`, { headers: { cookie } })).text(), `the console's fixture of ${name}`);
    }
    // The mappings page names what each mapping matches: the header, never a secret it is matched against.
    const mappings = await (await fetch(`${gw.base}/console/mappings`, { headers: { cookie } })).text();
    expect(mappings).to.include('x-gitlab-token');
    expectNoCredential(mappings, 'the console\'s mappings page');
  });

  it('hookrelay test hands its templates the same view', async () => {
    const payload = path.join(dir, 'payload.json');
    fs.writeFileSync(payload, '{}');
    const args = ['test', 'hb', '--payload', payload, '--config', gw.configFile];
    for (const [h, v] of Object.entries(credentialsSent('hb'))) args.push('-H', `${h}=${v}`);
    for (const [k, v] of new URLSearchParams(QUERY)) args.push('-q', `${k}=${v}`);
    const r = await run(args);
    expect(r.code, r.stderr).to.equal(0);
    expectNoCredential(r.stdout, 'hookrelay test');
    expectCleanView(JSON.parse(JSON.parse(r.stdout).text), 'hb', 'hookrelay test');
  });

  it('the log (access lines and debug lines) carries no credential', async () => {
    expectNoCredential(await gw.logged('"msg":"request"'), 'the log');
  });
});
