import { expect } from 'chai';
import { call, until } from '../../support/gateway.js';
import { runCli, writeConfig } from '../../support/cli.js';
import { startInProcess, storeRows, TOKEN, type InProcess } from '../../support/in-process.js';
import { consoleCookie } from '../../console/console-client.js';
import { REQUEST_LOG } from '../../support/request-log-sql.js';

/** A value only the payload carries: it must reach neither the answer nor the kept explanation. */
const MARKER = 'payload-marker-7f3a';

/** A request no mapping takes: the sender learns how many mappings its path has; the operator learns why each one did not match. */
describe('no_mapping: the 404 says how many mappings, the request log and the console say why', function () {
  this.timeout(60000);
  let gw: InProcess;
  const mappings = [
    { id: 'gh-push', match: { path: 'gh', headers: { 'x-github-event': 'push' } }, action: 'wake', textTemplate: 'push' },
    { id: 'gh-ci', match: { path: 'gh', source: 'ci' }, action: 'wake', textTemplate: 'ci' },
    { id: 'gh-big', match: { path: 'gh', when: 'payload.n > 10' }, action: 'wake', textTemplate: 'big' },
    { id: 'gh-cast', match: { path: 'gh', when: '$number(payload.label) > 0' }, action: 'wake', textTemplate: 'cast' },
    { id: 'gh-feed', match: { path: 'gh', method: 'GET' }, action: 'respond', respond: { body: 'ok' } },
  ];
  before(async () => {
    gw = await startInProcess({ hooks: { mappings } });
  });
  after(() => gw.stop());

  it('answers 404 no_mapping naming the count only; the row keeps each verdict, without the payload', async () => {
    const r = await call(`${gw.hooks}/gh`, { token: TOKEN, json: { n: 1, source: 'web', label: MARKER }, headers: { 'x-github-event': 'issues', 'x-request-id': 'nm-1' } });
    expect(r.status).to.equal(404);
    expect(r.data.error).to.deep.equal({ code: 'no_mapping', message: 'no mapping matches POST /hooks/gh with this payload: none of the 5 mappings on this path matched' });
    for (const id of mappings.map((m) => m.id)) expect(r.text).to.not.include(id);
    expect(r.text).to.not.include('x-github-event');
    const [row] = await until('the request-log rows', async () => {
      const rows = storeRows<{ error: string; explain: string | null }>(gw, `SELECT error, explain FROM ${REQUEST_LOG} WHERE request_id = 'nm-1'`);
      return rows.length ? rows : undefined;
    }, 10_000);
    expect(row!.error).to.equal('no_mapping');
    expect(row!.explain).to.not.include(MARKER);
    expect(JSON.parse(row!.explain!)).to.deep.equal({ mappings: 5, verdicts: [
      { mapping: 'gh-push', failed: 'header', header: 'x-github-event' },
      { mapping: 'gh-ci', failed: 'source', want: 'ci' },
      { mapping: 'gh-big', failed: 'when' },
      { mapping: 'gh-cast', failed: 'when', error: { code: 'D3030' } },
      { mapping: 'gh-feed', failed: 'method', want: 'GET' },
    ] });
  });

  it('a path no mapping takes says so; a matched request keeps no explanation', async () => {
    const none = await call(`${gw.hooks}/elsewhere`, { token: TOKEN, json: {}, headers: { 'x-request-id': 'nm-2' } });
    expect(none.status).to.equal(404);
    expect(none.data.error.message).to.equal('no mapping matches POST /hooks/elsewhere with this payload: no mapping takes this path');
    const ok = await call(`${gw.hooks}/gh`, { token: TOKEN, json: { source: 'ci' }, headers: { 'x-request-id': 'nm-3' } });
    expect(ok.status).to.equal(200);
    const rows = await until('the request-log rows', async () => {
      const got = storeRows<{ request_id: string; explain: string | null }>(gw, `SELECT request_id, explain FROM ${REQUEST_LOG} WHERE request_id IN ('nm-2', 'nm-3') ORDER BY request_id`);
      return got.length === 2 ? got : undefined;
    }, 10_000);
    expect(JSON.parse(rows![0]!.explain!)).to.deep.equal({ mappings: 0, verdicts: [] });
    expect(rows![1]!.explain).to.equal(null);
  });

  it('the console\'s request page and `requests --json` show the same explanation', async () => {
    const [{ seq }] = storeRows<{ seq: number }>(gw, `SELECT seq FROM ${REQUEST_LOG} WHERE request_id = 'nm-1'`);
    const cookie = await consoleCookie(gw.base);
    const page = await (await fetch(`${gw.base}/console/requests/${seq}`, { headers: { cookie } })).text();
    expect(page).to.include('Why no mapping matched');
    const items = [...page.matchAll(/<li class="mono">([^<]*)<\/li>/g)].map((m) => m[1]);
    expect(items).to.deep.equal([
      'gh-push: header x-github-event (missing or another value)',
      'gh-ci: source (it wants payload.source &quot;ci&quot;)',
      'gh-big: when was false',
      'gh-cast: when failed (D3030; counted as not matching)',
      'gh-feed: method (it takes GET)',
    ]);
    const file = writeConfig(gw.dir, { dataDir: `${gw.dir}/data`, hooks: { token: TOKEN } }, 'reader.json');
    const listed = await runCli(['requests', '--json', '--config', file]);
    expect(listed.code, listed.stderr).to.equal(0);
    const mine = listed.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((r) => r.seq === seq);
    expect(mine.explanation.verdicts).to.have.length(5);
  });
});
