import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../support/in-process.js';
import { sleep } from '../support/gateway.js';

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

  function rows(gw: InProcess): Row[] {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return db.prepare('SELECT * FROM requests ORDER BY seq').all() as Row[];
    } finally {
      db.close();
    }
  }

  /** The rows once `n` are there (refused requests are written in batches, a fraction of a second later). */
  async function settled(gw: InProcess, n: number): Promise<Row[]> {
    for (let i = 0; i < 100; i++) {
      const got = rows(gw);
      if (got.length >= n) return got;
      await sleep(50);
    }
    return rows(gw);
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
