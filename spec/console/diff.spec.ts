import { expect } from 'chai';
import { call } from '../support/gateway.js';
import { startInProcess, storeRows, TOKEN, type InProcess } from '../support/in-process.js';
import { consoleCookie } from './console-client.js';
import { REQUEST_LOG } from '../support/request-log-sql.js';

/** The console's diff (CONTRACT.md §16): `hookrelay diff` on a pasted config, for a signed-in admin, from the console's own pages only. */
describe('console: diff on a pasted config', function () {
  this.timeout(60000);
  let gw: InProcess;
  let cookie: string;
  const secretVar = 'HOOKRELAY_DIFF_SPEC_SECRET';
  before(async () => {
    process.env[secretVar] = 'diff-console-secret-0123456789';
    gw = await startInProcess({ hooks: { keepBodies: 1, mappings: [
      { id: 'alerts', match: { path: 'alerts' }, action: 'wake', textTemplate: 'alert {{level}}' },
    ] } });
    cookie = await consoleCookie(gw.base);
    for (const level of ['low', 'high']) expect((await call(`${gw.hooks}/alerts`, { token: TOKEN, json: { level } })).status).to.equal(200);
  });
  after(async () => {
    delete process.env[secretVar];
    await gw.stop();
  });

  const pasted = (config: string, headers: Record<string, string> = { cookie, origin: gw.base }) => fetch(`${gw.base}/console/diff`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams({ config }).toString(),
  });
  const NEXT = `hooks:
  token: \${HOOKRELAY_TOKEN}
  mappings:
    - { id: alerts-high, match: { path: alerts, when: "payload.level = 'high'" }, action: wake, textTemplate: "HIGH" }
`;

  it('lists each request whose outcome would change and the counts; dispatches and stores nothing', async () => {
    const rows = storeRows<{ n: number }>(gw, `SELECT count(*) AS n FROM ${REQUEST_LOG}`)[0]!.n;
    const res = await pasted(NEXT);
    expect(res.status).to.equal(200);
    const page = await res.text();
    const items = [...page.matchAll(/<li class="mono">([^<]*)<\/li>/g)].map((m) => m[1]);
    expect(items).to.deep.equal([
      '#2 POST /hooks/alerts: 200 alerts → 200 alerts-high',
      '#1 POST /hooks/alerts: 200 alerts → 404 no_mapping (newly unmatched)',
    ]);
    expect(page).to.include('<p id="counts">0 same, 1 changed, 1 newly unmatched, 0 newly matched</p>');
    expect(storeRows<{ n: number }>(gw, `SELECT count(*) AS n FROM ${REQUEST_LOG}`)[0]!.n).to.equal(rows);
    expect(storeRows<{ n: number }>(gw, 'SELECT count(*) AS n FROM events')[0]!.n).to.equal(2);
  });

  it('an invalid paste: its problems with their paths; a ${VAR} in a mapping outside a verify secret is refused, in a secret it is read', async () => {
    const bad = await (await pasted('hooks:\n  mappings:\n    - { id: a, match: { path: alerts }, action: wakes }\n')).text();
    expect(bad).to.include('The pasted config is invalid');
    expect(bad).to.match(/<li class="mono">hooks\.mappings\[0\]\.action: /);
    const leak = await (await pasted(`hooks:\n  mappings:\n    - { id: a, match: { path: alerts }, action: wake, textTemplate: "\${${secretVar}}" }\n`)).text();
    expect(leak).to.include('hooks.mappings[0].textTemplate: the console expands ${VAR} only in a verify secret');
    expect(leak).to.not.include(process.env[secretVar]!);
    const signed = await (await pasted(`hooks:\n  mappings:\n    - { id: a, match: { path: alerts }, action: wake, textTemplate: "x", verify: { scheme: github, secret: "\${${secretVar}}" } }\n`)).text();
    expect(signed).to.include('<p id="counts">');
    expect(signed).to.not.include(process.env[secretVar]!);
  });

  it('admin only, from the console\'s own pages: no session is 401, another origin 403', async () => {
    expect((await pasted(NEXT, { origin: gw.base })).status).to.equal(401);
    expect((await pasted(NEXT, { cookie, origin: 'https://evil.example' })).status).to.equal(403);
    const form = await fetch(`${gw.base}/console/diff`, { headers: { cookie } });
    expect(form.status).to.equal(200);
    expect(await form.text()).to.include('<form method="post" action="/console/diff"');
    expect((await fetch(`${gw.base}/console/diff`, { redirect: 'manual' })).status).to.equal(303);
  });
});
