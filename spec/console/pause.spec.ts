import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { consoleCookie } from './console-client.js';

/** The console's pause and resume buttons (CONTRACT.md §14): the same stored pause as the CLI's, behind the console's session and same-origin check. */
describe('console: pause and resume a mapping', function () {
  let gw: InProcess;
  let cookie: string;
  before(async () => {
    gw = await startInProcess({
      hooks: { mappings: [{ id: 'jobs', match: { path: 'jobs' }, messageTemplate: 'x', concurrency: 2, ratePerMinute: 30 }, { id: 'other', match: { path: 'other' }, messageTemplate: 'y' }] },
    });
    cookie = await consoleCookie(gw.base);
  });
  after(() => gw.stop());

  const stored = () => {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return (db.prepare('SELECT mapping FROM paused ORDER BY mapping').all() as { mapping: string }[]).map((r) => r.mapping);
    } finally {
      db.close();
    }
  };
  const page = async () => (await fetch(`${gw.base}/console/mappings`, { headers: { cookie } })).text();
  const post = (path: string, headers: Record<string, string> = { cookie, origin: gw.base }) =>
    fetch(`${gw.base}/console/${path}`, { method: 'POST', redirect: 'manual', headers });

  it('shows each mapping\'s limits and a Pause button; pausing and resuming go back to the page', async () => {
    const before = await page();
    expect(before).to.include('concurrency 2, 30/min');
    expect(before).to.include('action="/console/pause/jobs"');
    const res = await post('pause/jobs');
    expect(res.status).to.equal(303);
    expect(res.headers.get('location')).to.equal('/console/mappings');
    const after = await page();
    expect(after).to.include('action="/console/resume/jobs"').and.include('paused');
    expect(after).to.include('action="/console/pause/other"');
    expect(stored(), 'stored, like hookrelay pause').to.deep.equal(['jobs']);
    expect((await post('resume/jobs')).status).to.equal(303);
    expect(await page()).to.include('action="/console/pause/jobs"');
    expect(stored()).to.deep.equal([]);
  });

  it('refuses a POST from another origin, without a session, and for an unknown mapping', async () => {
    expect((await post('pause/jobs', { cookie, origin: 'http://evil.example' })).status).to.equal(403);
    expect((await post('pause/jobs', { cookie })).status, 'no Origin, no Sec-Fetch-Site').to.equal(403);
    expect((await post('pause/jobs', { origin: gw.base })).status, 'no session').to.equal(401);
    expect((await post('pause/nope')).status).to.equal(404);
    expect(await page()).to.include('action="/console/pause/jobs"');
    expect(stored()).to.deep.equal([]);
  });
});
