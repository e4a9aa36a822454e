import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { call, until } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';

const cli = (args: string[]) => runCli(args);

/** `GET {path}/runs` and `hookrelay runs`: listing, filtering and paging; the one `limit` rule. */
describe('http: GET {path}/runs lists runs; limit past the maximum is 400 on runs and events', function () {
  this.timeout(30000);
  let gw: InProcess;
  let model: FakeModel;
  let config: string;
  const ids: string[] = []; // in acceptance order

  before(async () => {
    model = await startFakeModel([{ match: 'bad', status: 404, error: { code: 'model_not_found' } }]);
    gw = await startInProcess({ agent: { baseUrl: model.baseUrl, maxConcurrent: 1 } });
    config = path.join(gw.dir, 'hookrelay.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir: path.join(gw.dir, 'data'), hooks: { token: TOKEN } }));
    for (const message of ['one', 'bad two', 'three', 'bad four', 'five']) {
      const r = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message, deliver: false } });
      expect(r.status).to.equal(202);
      ids.push(r.data.runId);
    }
    for (const id of ids) {
      await until(`run ${id} to end`, async () => {
        const r = await call(`${gw.hooks}/runs/${id}`, { token: ADMIN_TOKEN });
        return ['succeeded', 'failed'].includes(r.data.run.status);
      }, 10_000, 25);
    }
  });
  after(async () => {
    await gw.stop();
    await model.close();
  });

  it('answers every run, most recently accepted first, with errorCode on the failed ones', async () => {
    const r = await call(`${gw.hooks}/runs`, { token: ADMIN_TOKEN });
    expect(r.status, r.text).to.equal(200);
    expect(r.data.ok).to.equal(true);
    expect(r.data.runs.map((x: any) => x.runId)).to.deep.equal([...ids].reverse());
    const failed = r.data.runs.filter((x: any) => x.status === 'failed');
    expect(failed.map((x: any) => x.runId)).to.deep.equal([ids[3], ids[1]]);
    for (const f of failed) expect(f).to.include({ errorCode: 'model_http' }).and.have.property('error').that.match(/HTTP 404 \(model_not_found\)/);
    const one = await call(`${gw.hooks}/runs/${ids[1]}`, { token: ADMIN_TOKEN });
    expect(one.data.run).to.include({ errorCode: 'model_http' });
  });

  it('filters by status and pages on with before', async () => {
    const failed = await call(`${gw.hooks}/runs?status=failed`, { token: ADMIN_TOKEN });
    expect(failed.data.runs.map((x: any) => x.runId)).to.deep.equal([ids[3], ids[1]]);
    const seen: string[] = [];
    let before = '';
    for (let page = 0; page < 5; page++) {
      const r = await call(`${gw.hooks}/runs?limit=2${before ? `&before=${before}` : ''}`, { token: ADMIN_TOKEN });
      expect(r.status, r.text).to.equal(200);
      if (r.data.runs.length === 0) break;
      expect(r.data.runs.length).to.be.at.most(2);
      seen.push(...r.data.runs.map((x: any) => x.runId));
      before = seen[seen.length - 1]!;
    }
    expect(seen).to.deep.equal([...ids].reverse());
    const succeededBefore = await call(`${gw.hooks}/runs?status=succeeded&before=${ids[2]}`, { token: ADMIN_TOKEN });
    expect(succeededBefore.data.runs.map((x: any) => x.runId)).to.deep.equal([ids[0]]);
  });

  for (const [query, param, text] of [
    ['status=done', 'status', 'queued, running, succeeded, failed, timed_out'],
    ['limit=0', 'limit', '1 to 200'],
    ['limit=201', 'limit', '1 to 200'],
    ['limit=abc', 'limit', '1 to 200'],
    ['before=no-such-run', 'before', 'no-such-run'],
  ] as const) {
    it(`?${query} is 400 invalid_payload naming ${param}`, async () => {
      const r = await call(`${gw.hooks}/runs?${query}`, { token: ADMIN_TOKEN });
      expect(r.status, r.text).to.equal(400);
      expect(r.data.error.code).to.equal('invalid_payload');
      expect(r.data.error.message).to.match(new RegExp(`^${param}: `)).and.include(text);
    });
  }

  it('events: limit above the maximum is 400 naming it, like limit=0; the maximum itself is fine', async () => {
    for (const limit of ['1001', '0']) {
      const r = await call(`${gw.hooks}/events?limit=${limit}`, { token: ADMIN_TOKEN });
      expect(r.status, r.text).to.equal(400);
      expect(r.data.error).to.deep.equal({ code: 'invalid_payload', message: 'limit: must be an integer from 1 to 1000' });
    }
    expect((await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).status).to.equal(200);
  });

  it('without the token, 401; POST is 405 with Allow: GET, HEAD', async () => {
    expect((await call(`${gw.hooks}/runs`)).status).to.equal(401);
    const r = await call(`${gw.hooks}/runs`, { method: 'POST', raw: '{}' });
    expect(r.status).to.equal(405);
    expect(r.headers.get('allow')).to.equal('GET, HEAD');
  });

  it('hookrelay runs takes --status, --limit and --before, and shows errorCode (text and --json)', async () => {
    const page = await cli(['runs', '--config', config, '--limit', '2', '--before', ids[4]!, '--json']);
    expect(page.code, page.stderr).to.equal(0);
    const rows = page.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((x) => x.runId)).to.deep.equal([ids[3], ids[2]]);
    expect(rows[0]).to.include({ errorCode: 'model_http' });
    const text = await cli(['runs', '--config', config, '--status', 'failed']);
    expect(text.stdout.trim().split('\n')).to.have.length(3); // the headers and two runs
    expect(text.stdout).to.match(new RegExp(`^${ids[3]} +failed `, 'm')).and.include('[model_http] the model server at');
    const bad = await cli(['runs', '--config', config, '--limit', '201']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('--limit').and.include('1 to 200');
    const unknown = await cli(['runs', '--config', config, '--before', 'nope']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('--before: no run with id nope');
  });
});
