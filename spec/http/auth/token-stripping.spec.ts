import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { call, tmpDir } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/** A transform that shows everything it was handed of the request. */
const SPY = 'export default (input) => ({ kind: "wake", text: JSON.stringify({ url: input.url, query: input.query, headers: input.headers }) });\n';

/**
 * CONTRACT.md §6: the hooks token, in any of its forms, is removed from `headers`, `query` and
 * `url` before templates and transforms see them — by `serve` and by `hookrelay test` alike.
 */
describe('http: the token never reaches a transform, whichever way it came', () => {
  let gw: InProcess;
  let dir: string;
  before(async () => {
    dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'transforms'));
    fs.writeFileSync(path.join(dir, 'transforms', 'spy.mjs'), SPY);
    gw = await startInProcess({
      hooks: { transformsDir: path.join(dir, 'transforms'), mappings: [{ id: 'spy', match: { path: 'spy' }, action: 'wake', transform: { module: 'spy.mjs' } }] },
    }, dir);
  });
  after(async () => { await gw.stop(); });

  async function seen(query: string, headers: Record<string, string> = {}) {
    const r = await call(`${gw.hooks}/spy${query}`, { headers, json: { hello: 1 } });
    expect(r.status, r.text).to.equal(200);
    const events = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    const event = events.data.events.find((e: { id: string }) => e.id === r.data.eventId);
    expect(event.text, 'the stored text').to.not.include(TOKEN);
    return JSON.parse(event.text) as { url: string; query: Record<string, string>; headers: Record<string, string> };
  }

  for (const query of [`?token=${TOKEN}`, `?x=1&token=${TOKEN}`, `?token=${TOKEN}&x=1`, `?x=1&to%6Ben=${TOKEN}`, `?token=${TOKEN}&x=1&token=${TOKEN}`]) {
    it(`url and query keep the other parameters and lose the token: ${query.replace(TOKEN, 'TOKEN').replace(TOKEN, 'TOKEN')}`, async () => {
      const got = await seen(query);
      expect(got.url).to.match(/^\/hooks\/spy(\?x=1)?$/);
      if (query.includes('x=1')) {
        expect(got.url).to.equal('/hooks/spy?x=1');
        expect(got.query).to.deep.equal({ x: '1' });
      } else {
        expect(got.url).to.equal('/hooks/spy');
      }
    });
  }

  it('headers lose every token header (and cookies)', async () => {
    const got = await seen('', { authorization: `Bearer ${TOKEN}`, 'x-hookrelay-token': TOKEN, 'x-openclaw-token': TOKEN, cookie: `s=${TOKEN}`, 'x-kept': 'yes' });
    expect(got.headers['x-kept']).to.equal('yes');
    for (const h of ['authorization', 'x-hookrelay-token', 'x-openclaw-token', 'cookie']) expect(got.headers).to.not.have.property(h);
  });

  it('the url is the path the request was routed on', async () => {
    const r = await call(`${gw.base}/hooks//spy/?token=${TOKEN}&y=2`, { json: {} });
    expect(r.status).to.equal(200);
    const events = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    const text = events.data.events.find((e: { id: string }) => e.id === r.data.eventId).text;
    expect(JSON.parse(text).url).to.equal('/hooks/spy?y=2');
  });

  it('hookrelay test hands the transform the same url, without the token', async () => {
    const config = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(config, JSON.stringify({
      dataDir: path.join(dir, 'cli-data'),
      hooks: { token: TOKEN, transformsDir: path.join(dir, 'transforms'), mappings: [{ id: 'spy', match: { path: 'spy' }, action: 'wake', transform: { module: 'spy.mjs' } }] },
    }));
    const payload = path.join(dir, 'payload.json');
    fs.writeFileSync(payload, '{}');
    const r = await runCli(['test', 'spy', '--payload', payload, '--config', config, '-q', `token=${TOKEN}`, '-q', 'x=1', '-H', `Authorization=Bearer ${TOKEN}`]);
    expect(r.code, r.stderr).to.equal(0);
    const out = r.stdout;
    expect(out).to.not.include(TOKEN);
    const seenByTransform = JSON.parse(JSON.parse(out).text);
    expect(seenByTransform.url).to.equal('/hooks/spy?x=1');
    expect(seenByTransform.query).to.deep.equal({ x: '1' });
  });
});
