import { expect } from 'chai';
import { startInProcess, TOKEN, type InProcess } from '../support/in-process.js';
import { lastSeq } from '../../src/console/events-stream.js';
import { consoleCookie } from './console-client.js';

describe('console pages (plain HTTP)', function () {
  let gw: InProcess;
  let cookie: string;
  before(async () => {
    // No model answers (port 9): runs fail or wait; only their listing matters here.
    gw = await startInProcess({ agent: { maxConcurrent: 1 } });
    cookie = await consoleCookie(gw.base);
  });
  after(() => gw.stop());

  const page = async (p: string) => {
    const res = await fetch(gw.base + p, { headers: { cookie } });
    expect(res.status, p).to.equal(200);
    return res.text();
  };
  const runLinks = (text: string) => [...text.matchAll(/href="\/console\/runs\/([^"]+)"/g)].map((m) => m[1]);

  it('pages the runs 50 at a time, newest first, on with `before`, and filters by status', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 51; i++) {
      const res = await fetch(`${gw.hooks}/agent`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ message: `m${i}`, name: `run ${i}`, deliver: false }) });
      ids.push((await res.json()).runId);
    }
    const first = await page('/console/');
    expect(runLinks(first)).to.deep.equal(ids.slice(1).reverse());
    const older = /href="(\/console\/\?before=[^"]+)">Older/.exec(first)![1]!;
    expect(older).to.equal(`/console/?before=${ids[1]}`);
    const second = await page(older);
    expect(runLinks(second)).to.deep.equal([ids[0]]);
    expect(second).to.include('← Newest');
    expect(second).not.to.include('Older →');
    // An unknown status is no filter; a known one filters.
    expect(runLinks(await page('/console/?status=bogus'))).to.have.length(50);
    expect(await page('/console/?status=timed_out')).to.include('No timed out runs yet.');
  });

  it('shows the newest events first, and only the last 100', async () => {
    for (let i = 1; i <= 105; i++) {
      await fetch(`${gw.hooks}/wake`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ text: `event number ${i}.`, mode: 'next-heartbeat' }) });
    }
    const text = await page('/console/events');
    const shown = [...text.matchAll(/event number (\d+)\./g)].map((m) => Number(m[1]));
    expect(shown).to.have.length(100);
    expect(shown[0]).to.equal(105);
    expect(shown[99]).to.equal(6);
    expect(text).to.match(/data-after="\d+"/);
  });

  // List pages cut long values; the full value stays on the detail page. The runs page shows
  // the newest 50: this test's own.
  it('a runs page of 50 runs with 100 KB names and 200-character session keys stays under 64 KB; a run\'s page shows its whole name, escaped', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const name = `<b>${String(i).padStart(2, '0')}</b>${'n'.repeat(100 * 1024)}`;
      const sessionKey = `hook:${String(i).padStart(2, '0')}${'k'.repeat(193)}`;
      const res = await fetch(`${gw.hooks}/agent`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ message: 'm', name, sessionKey, deliver: false }) });
      expect(res.status).to.equal(202);
      ids.push((await res.json()).runId);
    }
    const list = await page('/console/');
    // Reported in docs/console.md: the size of this page.
    console.log(`      runs page, 50 rows of 100 KB names: ${list.length} bytes`);
    expect(list.length).to.be.below(64 * 1024);
    expect(list).to.include('&lt;b&gt;49&lt;/b&gt;nnn');
    expect(list).to.include('…');
    expect(list).not.to.include('<b>49');
    const detail = await (await fetch(`${gw.base}/console/runs/${ids[49]}`, { headers: { cookie } })).text();
    expect(detail).to.include(`&lt;b&gt;49&lt;/b&gt;${'n'.repeat(100 * 1024)} `);
    expect(detail).to.include(`hook:49${'k'.repeat(193)}<`);
  });
});

describe('console: lastSeq finds the newest event through forward paging', () => {
  const storeOf = (seqs: number[]) => ({
    listEvents: async (after: number, limit: number) => seqs.filter((s) => s > after).slice(0, limit).map((seq) => ({ seq }) as any),
  });
  it('for no events, one, dense and gappy sequences', async () => {
    expect(await lastSeq(storeOf([]))).to.equal(0);
    expect(await lastSeq(storeOf([7]))).to.equal(7);
    for (const n of [1, 2, 3, 64, 65, 1000]) expect(await lastSeq(storeOf(Array.from({ length: n }, (_, i) => i + 1))), `1..${n}`).to.equal(n);
    expect(await lastSeq(storeOf([500, 501, 9000, 123457]))).to.equal(123457);
  });
});
