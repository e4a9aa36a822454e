import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createLogger } from '../../../src/log.js';
import { call, tmpDir, until } from '../../support/gateway.js';
import { startInProcess, storeRows, TOKEN, type InProcess } from '../../support/in-process.js';
import { consoleCookie } from '../../console/console-client.js';
import { REQUEST_LOG } from '../../support/request-log-sql.js';

const MARKER = 'payload-marker-4e1b9';

/**
 * CONTRACT.md §16: a template's, `match.when`'s or transform's failure is logged at warn with the
 * mapping, the code, the message and where (line and column, or JSONata's position), never payload
 * data; the request log and the console's request page show the same.
 */
describe('http: a mapping\'s failure is visible where people look', function () {
  this.timeout(60000);
  let gw: InProcess;
  const lines: string[] = [];
  const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  before(async () => {
    const dir = tmpDir();
    const transforms = path.join(dir, 'transforms');
    fs.mkdirSync(transforms);
    fs.writeFileSync(path.join(transforms, 'pick.mjs'), 'export default function ({ payload }) { throw new Error(`no team named "${payload.team}" for ${payload.team}`); }\n');
    const log = createLogger('info', { write: (line: string) => { lines.push(line); } });
    gw = await startInProcess({
      hooks: {
        transformsDir: transforms,
        mappings: [
          { id: 'hb', match: { path: 'hb' }, action: 'wake', textTemplate: 'for {{team}}:\n{{#each items}}{{#each ../items}}.{{/each}}{{/each}}' },
          { id: 'js', match: { path: 'js' }, action: 'wake', engine: 'jsonata', textTemplate: '"n=" & $number(team)' },
          { id: 'when', match: { path: 'when', when: 'payload.team > 3' }, action: 'wake', textTemplate: 'x' },
          { id: 'tr', match: { path: 'tr' }, action: 'wake', transform: { module: 'pick.mjs' } },
        ],
      },
    }, dir, log);
  });
  after(async () => { await gw?.stop(); });

  // 150 × 150 iterations of the inner block: past the render budget, which trips there (on steps, or on the clock when the machine is slow).
  const payload = { team: MARKER, items: Array.from({ length: 150 }, (_, i) => i) };
  const BUDGET_TRIP = /^the template (would take more than 20000 steps|render took more than 100 ms)/;
  const warnOf = (mapping: string) => until(`the warn line of ${mapping}`, () => logged().find((l) => l.level === 40 && l.mapping === mapping));

  it('a Handlebars failure at run time (its render budget): warn with the mapping, code, message, line and column', async () => {
    const r = await call(`${gw.hooks}/hb`, { token: TOKEN, json: payload });
    expect(r.status).to.equal(500);
    expect(r.data.error.code).to.equal('transform_failed');
    const warn = await warnOf('hb');
    expect(warn).to.include({ code: 'transform_failed', route: 'mapping:hb', step: 'textTemplate', cause: 'render_budget', line: 2, column: 16 });
    expect(warn.message).to.match(BUDGET_TRIP);
  });

  it('a JSONata failure: warn with its code, message and position; the value it quotes is hidden', async () => {
    expect((await call(`${gw.hooks}/js`, { token: TOKEN, json: payload })).status).to.equal(500);
    expect(await warnOf('js')).to.include({ code: 'transform_failed', step: 'textTemplate', cause: 'D3030', message: 'Unable to cast value to a number: …', position: 15 });
  });

  it('a match.when failure: warn with JSONata\'s code, message and position; the request is a 404', async () => {
    expect((await call(`${gw.hooks}/when`, { token: TOKEN, json: payload })).status).to.equal(404);
    const warn = await warnOf('when');
    expect(warn).to.include({ step: 'match.when', code: 'T2009', msg: 'match.when failed on a request; the mapping counted as not matching' });
    expect(warn.message).to.equal('The values … and … either side of operator ">" must be of the same data type');
    expect(warn.position).to.be.a('number');
  });

  it('a transform failure: warn with the error\'s name and its message, what it quoted from the payload hidden', async () => {
    expect((await call(`${gw.hooks}/tr`, { token: TOKEN, json: payload })).status).to.equal(500);
    expect(await warnOf('tr')).to.include({ code: 'transform_failed', step: 'transform', cause: 'Error', message: 'no team named "…" for …' });
  });

  it('no log line holds the payload', () => {
    expect(lines.length).to.be.greaterThan(0);
    for (const line of lines) expect(line).to.not.include(MARKER);
  });

  it('the request log and the console\'s request page keep the same cause', async () => {
    type Row = { seq: number; route: string; failures: string | null };
    const rows = await until('four request-log rows', () => {
      const got = storeRows<Row>(gw, `SELECT seq, route, failures FROM ${REQUEST_LOG} WHERE route LIKE 'mapping:%' OR route = 'unmatched' ORDER BY seq`);
      return got.length >= 4 ? got : undefined;
    });
    const byRoute = new Map(rows.map((r) => [r.route, r]));
    const hb = byRoute.get('mapping:hb')!;
    const [failure, ...more] = JSON.parse(hb.failures!) as Record<string, unknown>[];
    expect(more).to.deep.equal([]);
    expect(failure).to.include({ mappingId: 'hb', step: 'textTemplate', code: 'render_budget', line: 2, column: 16 });
    expect(failure!.message).to.match(BUDGET_TRIP);
    const unmatched = rows.find((r) => r.failures?.includes('"mappingId":"when"'));
    expect(unmatched, 'the 404 row keeps its match.when failure').to.not.equal(undefined);
    for (const r of rows) expect(r.failures ?? '').to.not.include(MARKER);

    const cookie = await consoleCookie(gw.base);
    const page = await (await fetch(`${gw.base}/console/requests/${hb.seq}`, { headers: { cookie } })).text();
    expect(page).to.include(`mapping &quot;hb&quot;: textTemplate failed: render_budget: ${failure!.message} (line 2, column 16)`);
    const js = await (await fetch(`${gw.base}/console/requests/${byRoute.get('mapping:js')!.seq}`, { headers: { cookie } })).text();
    expect(js).to.include('D3030: Unable to cast value to a number: … (position 15)');
    expect(page + js).to.not.include(MARKER);
  });
});
