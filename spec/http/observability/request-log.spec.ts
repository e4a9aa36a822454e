import { readFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { sleep, until } from '../../support/gateway.js';
import { REQUEST_LOG } from '../../support/request-log-sql.js';

const SECRET = 'request-log-signing-secret';
const MARK = 'body-marker-7c1e';

interface Row {
  seq: number; at: string; request_id: string | null; method: string; path: string; route: string; status: number; ms: number;
  event_ids: string | null; run_ids: string | null; replayed: number; error: string | null; content_type: string | null;
  user_agent: string | null; body: string | null; body_until: string | null; replay_of: number | null;
}

/** The request log over the real listener: which requests get a row, with what, and what never goes in. */
describe('http: the request log', function () {
  this.timeout(30000);

  /** The store's files, the database and its write-ahead log. */
  const storeFiles = (gw: InProcess) => ['hookrelay.db', 'hookrelay.db-wal'].map((f) => path.join(gw.dir, 'data', f)).filter(existsSync);
  const storeBytes = (gw: InProcess) => storeFiles(gw).reduce((sum, f) => sum + statSync(f).size, 0);

  function rows(gw: InProcess): Row[] {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return db.prepare(`SELECT * FROM ${REQUEST_LOG} ORDER BY seq`).all() as Row[];
    } finally {
      db.close();
    }
  }

  /** The rows once `n` are there (refused requests are written in batches, a fraction of a second later). */
  async function settled(gw: InProcess, n: number): Promise<Row[]> {
    let got: Row[] = [];
    return until(() => `${n} request-log rows (have ${got.length})`, () => {
      got = rows(gw);
      return got.length >= n ? got : undefined;
    }, 10_000);
  }

  // Each request names itself (X-Request-Id): the row keeps a sender's own plain id.
  let n = 0;
  const sent = new WeakMap<Response, string>();
  const named = async (url: string, init: RequestInit & { headers?: Record<string, string> }) => {
    const id = `spec-${++n}`;
    const res = await fetch(url, { ...init, headers: { 'x-request-id': id, ...init.headers } });
    sent.set(res, id);
    return res;
  };
  const post = (url: string, body: string, headers: Record<string, string> = {}) =>
    named(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers }, body });

  describe('with hooks.keepBodies', () => {
    let gw: InProcess;
    before(async () => {
      gw = await startInProcess({
        hooks: {
          keepBodies: 7,
          mappings: [
            { id: 'signed', match: { path: 'signed' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'signed {{n}}', verify: { scheme: 'github', secret: SECRET } },
            { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' },
          ],
        },
      });
    });
    after(() => gw.stop());

    it('a mix of requests: one row each with the right fields; nothing of the token, secret or signature in the database', async () => {
      const wake = await post(`${gw.hooks}/wake`, JSON.stringify({ text: `hello ${MARK}`, mode: 'next-heartbeat' }), { 'user-agent': 'spec-agent/1' });
      const { eventId } = await wake.json();
      const agent = await post(`${gw.hooks}/agent`, JSON.stringify({ message: 'hi', deliver: false }));
      const { runId } = await agent.json();
      const wrongToken = await named(`${gw.hooks}/wake?token=not-${TOKEN}`, { method: 'POST', body: '{}' });
      const badJson = await post(`${gw.hooks}/note`, `{"n": ${MARK}`);
      const payload = JSON.stringify({ n: 1 });
      const badSignature = await post(`${gw.hooks}/signed`, payload, { 'x-hub-signature-256': await githubSign('not-the-secret', payload) });
      const goodSignature = await post(`${gw.hooks}/signed`, payload, { 'x-hub-signature-256': await githubSign(SECRET, payload) });
      const keyed = () => post(`${gw.hooks}/note`, JSON.stringify({ n: 2 }), { 'idempotency-key': 'same-key' });
      const first = await keyed();
      const repeat = await keyed();
      const read = await named(`${gw.hooks}/events`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      // Outside the hooks path: no rows.
      await fetch(`${gw.base}/healthz`);
      await fetch(`${gw.base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      await fetch(`${gw.base}/console/login`);
      expect([wake.status, agent.status, wrongToken.status, badJson.status, badSignature.status, goodSignature.status, first.status, repeat.status, read.status])
        .to.deep.equal([200, 202, 401, 400, 401, 200, 200, 200, 200]);

      const got = await settled(gw, 9);
      await sleep(300); // nothing more comes
      const all = rows(gw);
      expect(all).to.have.length(9);
      const byId = (res: Response) => all.find((r) => r.request_id === sent.get(res))!;
      expect(got.length).to.equal(9);

      const w = byId(wake);
      expect(w).to.include({ method: 'POST', path: '/hooks/wake', route: 'wake', status: 200, event_ids: eventId, run_ids: null, replayed: 0, error: null, content_type: 'application/json', user_agent: 'spec-agent/1', replay_of: null });
      expect(w.body).to.equal(JSON.stringify({ text: `hello ${MARK}`, mode: 'next-heartbeat' }));
      expect(Date.parse(w.body_until!) - Date.parse(w.at)).to.be.closeTo(7 * 24 * 3600 * 1000, 60_000);
      expect(w.ms).to.be.a('number').and.at.least(0);
      expect(byId(agent)).to.include({ route: 'agent', status: 202, run_ids: runId, event_ids: null });
      expect(byId(wrongToken)).to.include({ route: 'wake', status: 401, error: 'unauthorized', body: null, path: '/hooks/wake' });
      expect(byId(badJson)).to.include({ route: 'unmatched', status: 400, error: 'invalid_json', body: `{"n": ${MARK}` });
      expect(byId(badSignature)).to.include({ status: 401, error: 'invalid_signature' });
      expect(byId(goodSignature)).to.include({ route: 'mapping:signed', status: 200, error: null });
      expect(byId(first)).to.include({ route: 'mapping:note', replayed: 0 });
      expect(byId(first).event_ids).to.be.a('string');
      expect(byId(repeat)).to.include({ route: 'mapping:note', status: 200, replayed: 1, event_ids: null });
      expect(byId(read)).to.include({ method: 'GET', route: 'events', status: 200, body: null });

      // Neither the token, the signing secret nor a signature value is anywhere in the files.
      const files = ['hookrelay.db', 'hookrelay.db-wal'].map((f) => path.join(gw.dir, 'data', f)).filter(existsSync);
      const bytes = files.map((f) => readFileSync(f).toString('latin1')).join('');
      expect(bytes).to.include(MARK); // the kept bodies are there: the search works
      expect(bytes).to.not.include(TOKEN);
      expect(bytes).to.not.include(ADMIN_TOKEN);
      expect(bytes).to.not.include(SECRET);
      expect(bytes).to.not.include((await githubSign(SECRET, payload)).slice(7));
    });

    it('an accepted request and its row are one commit: the row is there as soon as the answer is', async () => {
      const res = await post(`${gw.hooks}/note`, JSON.stringify({ n: 3 }));
      const id = sent.get(res);
      await res.json();
      // No wait: a buffered row would not be there yet.
      expect(rows(gw).find((r) => r.request_id === id)).to.include({ status: 200, route: 'mapping:note' });
    });
  });

  describe('refused requests (CONTRACT.md §8): no body kept, at most 60 rows a minute per address', () => {
    let gw: InProcess;
    before(async () => {
      gw = await startInProcess({
        // X-Forwarded-For from the loopback peer names the client: one listener, several addresses.
        server: { trustedProxies: ['127.0.0.1'] },
        hooks: {
          keepBodies: 7,
          mappings: [{ id: 'signed', match: { path: 'signed' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'signed {{n}}', auth: 'signature', verify: { scheme: 'github', secret: SECRET } }],
        },
      });
    });
    after(() => gw.stop());

    const from = (address: string) => ({ 'x-forwarded-for': address });
    /** The value of `hookrelay_request_log_dropped_total` now. */
    const dropped = async () => {
      const text = await (await fetch(`${gw.base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
      return Number(/^hookrelay_request_log_dropped_total (\d+)$/m.exec(text)![1]);
    };

    it('120 unsigned 250 KiB bodies to an auth: signature mapping (401, then 429): no body stored, the store barely grows; a signed body is kept', async () => {
      await settled(gw, 0);
      const before = storeBytes(gw);
      const big = JSON.stringify({ n: 0, pad: `${MARK}-${'x'.repeat(250 * 1024 - 40)}` });
      const statuses: number[] = [];
      for (let i = 0; i < 120; i++) {
        const r = await named(`${gw.hooks}/signed`, { method: 'POST', headers: { ...from('198.51.100.1'), 'x-hub-signature-256': await githubSign('not-the-secret', big) }, body: big });
        statuses.push(r.status);
        await r.arrayBuffer();
      }
      // The failure budget (20 a minute per address) turns the later ones into 429 after their body was read.
      expect(statuses.filter((s) => s === 401)).to.have.length(20);
      expect(statuses.filter((s) => s === 429)).to.have.length(100);
      const payload = JSON.stringify({ n: 1, marker: MARK });
      const signed = await named(`${gw.hooks}/signed`, { method: 'POST', headers: { ...from('198.51.100.1'), 'x-hub-signature-256': await githubSign(SECRET, payload) }, body: payload });
      expect(signed.status).to.equal(200);
      const refusedRows = (await settled(gw, 61)).filter((r) => r.status === 401 || r.status === 429);
      await sleep(300);
      const grown = storeBytes(gw) - before;
      console.log(`      store growth for 120 refused 250 KiB bodies: ${(grown / 1024).toFixed(0)} KiB`);
      expect(refusedRows.length).to.be.greaterThan(0);
      expect(refusedRows.filter((r) => r.body !== null || r.body_until !== null).length, 'refused rows with a body').to.equal(0);
      expect(grown).to.be.below(1024 * 1024);
      expect(rows(gw).find((r) => r.request_id === sent.get(signed))).to.include({ status: 200, body: payload });
    });

    it('100 tokenless requests from one address: 60 rows, the rest counted as dropped; another address and accepted requests still get rows', async () => {
      const droppedBefore = await dropped();
      const flood: Response[] = [];
      for (let i = 0; i < 100; i++) {
        const r = await named(`${gw.hooks}/wake`, { method: 'POST', headers: from('198.51.100.2'), body: '{}' });
        await r.arrayBuffer();
        flood.push(r);
      }
      expect(new Set(flood.map((r) => r.status))).to.deep.equal(new Set([401, 429]));
      const other: Response[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await named(`${gw.hooks}/wake`, { method: 'POST', headers: from('198.51.100.3'), body: '{}' });
        await r.arrayBuffer();
        other.push(r);
      }
      const accepted: Response[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await post(`${gw.hooks}/wake`, JSON.stringify({ text: `accepted ${i}`, mode: 'next-heartbeat' }), from('198.51.100.2'));
        expect(r.status).to.equal(200);
        accepted.push(r);
      }
      // The other address's rows were buffered last: once they are stored, so is everything before them.
      const logged = (list: Response[]) => {
        const ids = new Set(rows(gw).map((r) => r.request_id));
        return list.filter((r) => ids.has(sent.get(r)!)).length;
      };
      await until('the rows of the other address', async () => (logged(other) === other.length ? true : undefined), 10_000);
      await sleep(300); // nothing more comes
      expect(logged(flood), 'rows of the flooding address').to.equal(60);
      expect(await dropped() - droppedBefore, 'dropped rows counted').to.equal(40);
      expect(logged(other), 'rows of another address').to.equal(5);
      expect(logged(accepted), 'rows of accepted requests').to.equal(3);
    });
  });

  describe('with hooks.keepBodies 0 (the default)', () => {
    let gw: InProcess;
    before(async () => {
      gw = await startInProcess({ hooks: { mappings: [{ id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' }] } });
    });
    after(() => gw.stop());

    it('keeps no body, of accepted or refused requests', async () => {
      await post(`${gw.hooks}/note`, JSON.stringify({ n: 1, marker: MARK }));
      await post(`${gw.hooks}/note`, `not json ${MARK}`);
      const got = await settled(gw, 2);
      expect(got.map((r) => [r.status, r.body, r.body_until])).to.deep.equal([[200, null, null], [400, null, null]]);
      const bytes = ['hookrelay.db', 'hookrelay.db-wal'].map((f) => path.join(gw.dir, 'data', f)).filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('');
      expect(bytes).to.not.include(`not json ${MARK}`);
    });
  });
});
