import { createHmac } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { call, tmpDir, until } from '../../support/gateway.js';
import { createLogger } from '../../../src/log.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { consoleCookie } from '../../console/console-client.js';
import { REQUEST_LOG } from '../../support/request-log-sql.js';

/**
 * Answering senders (CONTRACT.md §12), through the real listener and store: `match.method`
 * (GET mappings, 405 with the path's own Allow, not counted), `match.when`, `action: respond`
 * (a catch-all 204 for the events nobody wants, a GET verification echo), and `response` on
 * wake/agent mappings (the same answer on an idempotent repeat).
 */
describe('http: answering senders (match.method, match.when, respond, response)', () => {
  let gw: InProcess;
  const SECRET = 'gh-secret';
  const logged: Record<string, unknown>[] = [];
  before(async () => {
    const log = createLogger('warn', { write: (line: string) => { logged.push(JSON.parse(line)); } });
    gw = await startInProcess({
      hooks: {
        mappings: [
          // GitHub: pushes act, every other event is acknowledged and ignored.
          { id: 'gh-push', match: { path: 'github', headers: { 'x-github-event': 'push' } }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'push to {{repository.full_name}}' },
          { id: 'gh-rest', match: { path: 'github' }, action: 'respond', respond: { status: 204 } },
          // A GET verification: echo the challenge as text.
          { id: 'verify', match: { path: 'feed', method: 'GET' }, action: 'respond', respond: { contentType: 'text/plain', body: '{{challenge}}', headers: { 'cache-control': 'no-store' } } },
          { id: 'feed', match: { path: 'feed' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'feed {{n}}' },
          // GET only.
          { id: 'ping', match: { path: 'ping', method: 'GET' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'ping {{who}}' },
          // match.when: only urgent alerts act; a JSON body in a handlebars template.
          { id: 'urgent', match: { path: 'alerts', when: 'payload.level = "urgent" and $count(payload.items) > 0' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'urgent {{host}}' },
          { id: 'broken-when', match: { path: 'alerts', when: 'payload.level > 3' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'numeric {{host}}' },
          { id: 'calm', match: { path: 'alerts' }, action: 'respond', respond: { status: 200, body: '{"pong": {{hook_id}} }' } },
          // response on wake and agent mappings.
          { id: 'tell', match: { path: 'tell' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'tell {{n}}', response: { status: 201, contentType: 'text/plain', body: 'got {{n}} as {{eventId}}' } },
          { id: 'ask', match: { path: 'ask' }, action: 'agent', messageTemplate: 'ask {{n}}', sessionKey: 'hook:ask:{{n}}', response: { body: '{"run": "{{runId}}", "session": "{{sessionKey}}"}' } },
          { id: 'quiet', match: { path: 'quiet' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'quiet {{n}}', response: { status: 204 } },
          { id: 'batch', match: { path: 'batch' }, forEach: 'items', action: 'wake', wakeMode: 'next-heartbeat', textTemplate: '"item " & n', idempotencyKey: '"item-" & n', engine: 'jsonata', response: { body: '$string({"first": eventId, "count": $count(actions)})' } },
          // A signed POST and an unsigned GET respond on one path.
          { id: 'signed', match: { path: 'signed' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'signed', verify: { scheme: 'github', secret: SECRET }, auth: 'signature' },
          { id: 'signed-get', match: { path: 'signed', method: 'GET' }, action: 'respond', respond: { contentType: 'text/plain', body: 'ok' } },
        ],
      },
    }, tmpDir(), log);
  });
  after(async () => { await gw.stop(); });

  const events = async () => {
    const r = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    return (r.data.events as { kind: string; text: string }[]).filter((e) => e.kind === 'wake').map((e) => e.text);
  };
  const rowOf = (requestId: string) => {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return db.prepare(`SELECT * FROM ${REQUEST_LOG} WHERE request_id = ?`).get(requestId) as { route: string; status: number; method: string } | undefined;
    } finally {
      db.close();
    }
  };

  describe('action: respond', () => {
    it('a catch-all 204 acknowledges the events nobody wants, acting on nothing; the wanted one still acts', async () => {
      const ping = await call(`${gw.hooks}/github`, { token: TOKEN, json: { zen: 'hi' }, headers: { 'x-github-event': 'ping', 'x-request-id': 'gh-ping-1' } });
      expect(ping.status, ping.text).to.equal(204);
      expect(ping.text).to.equal('');
      expect(ping.headers.get('content-type')).to.equal(null);
      const push = await call(`${gw.hooks}/github`, { token: TOKEN, json: { repository: { full_name: 'acme/api' } }, headers: { 'x-github-event': 'push' } });
      expect(push.status, push.text).to.equal(200);
      expect(await events()).to.include('push to acme/api').and.not.include.members(['']);
      expect((await events()).filter((t) => t.includes('zen'))).to.deep.equal([]);
    });

    it('is logged in the request log like any answer, under its mapping', async () => {
      await call(`${gw.hooks}/github`, { token: TOKEN, json: {}, headers: { 'x-github-event': 'star', 'x-request-id': 'gh-star-1' } });
      const row = await until('the request-log row of the 204', () => rowOf('gh-star-1'));
      expect(row).to.include({ route: 'mapping:gh-rest', status: 204, method: 'POST' });
    });

    it('answers a GET verification with its rendered text body, content type and headers', async () => {
      const r = await call(`${gw.hooks}/feed?challenge=abc123&token=${TOKEN}`);
      expect(r.status, r.text).to.equal(200);
      expect(r.text).to.equal('abc123');
      expect(r.headers.get('content-type')).to.equal('text/plain');
      expect(r.headers.get('cache-control')).to.equal('no-store');
      // An echo of what a request sent never runs as a page of the console's origin.
      expect(r.headers.get('content-security-policy')).to.equal("default-src 'none'; sandbox");
      expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
      // The POST of the same path is the other mapping's.
      const post = await call(`${gw.hooks}/feed`, { token: TOKEN, json: { n: 1 } });
      expect(post.status, post.text).to.equal(200);
      expect(post.data).to.include({ ok: true, action: 'wake' });
    });

    it('a JSON body template writes {"pong": {{hook_id}} } (a space before the closing braces)', async () => {
      const r = await call(`${gw.hooks}/alerts`, { token: TOKEN, json: { level: 'low', hook_id: 42 } });
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('content-type')).to.equal('application/json');
      expect(r.data).to.deep.equal({ pong: 42 });
    });
  });

  describe('match.method', () => {
    it('a GET mapping takes GET; its payload is the query without the token', async () => {
      const r = await call(`${gw.hooks}/ping?who=ada&token=${TOKEN}`);
      expect(r.status, r.text).to.equal(200);
      expect(await events()).to.include('ping ada');
    });

    it('405 with the path\'s own Allow header for the other method, before the token check and not counted', async () => {
      for (let i = 0; i < 25; i++) {
        const r = await call(`${gw.hooks}/ping`, { json: { who: 'x' } });
        expect(r.status, r.text).to.equal(405);
        expect(r.headers.get('allow')).to.equal('GET');
        expect(r.data.error.code).to.equal('method_not_allowed');
      }
      // 25 refusals without a token, none counted: a wrong token now is a plain 401, not 429.
      const wrong = await call(`${gw.hooks}/ping?who=x`, { token: 'wrong' });
      expect(wrong.status).to.equal(401);
      const get = await call(`${gw.hooks}/tell`);
      expect(get.status).to.equal(405);
      expect(get.headers.get('allow')).to.equal('POST');
      const put = await call(`${gw.hooks}/feed`, { method: 'PUT', token: TOKEN });
      expect(put.status).to.equal(405);
      expect(put.headers.get('allow')).to.equal('GET, POST');
    });

    it('a GET still needs the hooks token', async () => {
      const r = await call(`${gw.hooks}/ping?who=eve`);
      expect(r.status).to.equal(401);
      expect(await events()).to.not.include('ping eve');
    });

    it('an auth: signature POST mapping does not waive the token for a GET mapping of its path', async () => {
      const noToken = await call(`${gw.hooks}/signed`);
      expect(noToken.status, noToken.text).to.equal(401);
      const withToken = await call(`${gw.hooks}/signed?token=${TOKEN}`);
      expect(withToken.status, withToken.text).to.equal(200);
      expect(withToken.text).to.equal('ok');
      // The signed POST goes on as before.
      const body = '{}';
      const sig = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
      const signed = await call(`${gw.hooks}/signed`, { raw: body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': sig } });
      expect(signed.status, signed.text).to.equal(200);
    });
  });

  describe('match.when', () => {
    it('matches only when truthy; a when that throws counts as not matching', async () => {
      const urgent = await call(`${gw.hooks}/alerts`, { token: TOKEN, json: { level: 'urgent', items: [1], host: 'db1' } });
      expect(urgent.status, urgent.text).to.equal(200);
      expect(urgent.data).to.include({ ok: true, action: 'wake' });
      // No items: `urgent` is false, `broken-when` compares a string with a number (throws), `calm` answers.
      const none = await call(`${gw.hooks}/alerts`, { token: TOKEN, json: { level: 'urgent', items: [], host: 'db2', hook_id: 7 } });
      expect(none.status, none.text).to.equal(200);
      expect(none.data).to.deep.equal({ pong: 7 });
      const numeric = await call(`${gw.hooks}/alerts`, { token: TOKEN, json: { level: 5, host: 'db3' } });
      expect(numeric.data).to.include({ action: 'wake' });
      expect(await events()).to.include.members(['urgent db1', 'numeric db3']).and.not.include('urgent db2');
    });

    it('a when that throws is logged as a warning with its mapping and JSONata\'s code, never the payload', async () => {
      logged.length = 0;
      await call(`${gw.hooks}/alerts`, { token: TOKEN, json: { level: 'secret-level-text', host: 'db4' } });
      const warning = await until('the match.when warning', () => logged.find((l) => l.mapping === 'broken-when'));
      expect(warning).to.include({ level: 40, code: 'T2009', msg: 'match.when failed on a request; the mapping counted as not matching' });
      expect(JSON.stringify(logged)).to.not.include('secret-level-text');
    });
  });

  describe('the console playground', () => {
    it('shows a GET respond and a response like any other result: status, content type, body', async () => {
      const cookie = await consoleCookie(gw.base);
      const play = async (body: Record<string, string>) => {
        const r = await fetch(`${gw.base}/console/playground`, { method: 'POST', headers: { cookie, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(r.status).to.equal(200);
        return (await r.json()) as { ok: boolean; output?: Record<string, unknown>; problem?: string };
      };
      expect(await play({ name: 'feed', method: 'GET', query: 'challenge=pg-1' })).to.deep.equal({
        ok: true, output: { mapping: 'verify', status: 200, response: { status: 200, contentType: 'text/plain', body: 'pg-1', headers: { 'cache-control': 'no-store' } } },
      });
      const tell = await play({ name: 'tell', payload: '{"n": 5}' });
      expect(tell.output).to.deep.include({ mapping: 'tell', status: 201, response: { status: 201, contentType: 'text/plain', body: 'got 5 as <eventId>' } });
      expect(await play({ name: 'github', payload: '{}', headers: 'x-github-event: ping' })).to.deep.equal({ ok: true, output: { mapping: 'gh-rest', status: 204, response: { status: 204 } } });
      expect((await play({ name: 'ping', payload: '{}' })).problem).to.equal('POST is not allowed on /hooks/ping; its mappings take GET');
    });
  });

  describe('response', () => {
    it('replaces a wake mapping\'s success answer; its body sees eventId', async () => {
      const r = await call(`${gw.hooks}/tell`, { token: TOKEN, json: { n: 3 } });
      expect(r.status, r.text).to.equal(201);
      expect(r.headers.get('content-type')).to.equal('text/plain');
      expect(r.text).to.match(/^got 3 as [0-9a-f-]{36}$/);
      expect(await events()).to.include('tell 3');
    });

    it('an agent mapping\'s body sees runId and sessionKey; the status stays the usual one', async () => {
      const r = await call(`${gw.hooks}/ask`, { token: TOKEN, json: { n: 9 } });
      expect(r.status, r.text).to.equal(202);
      expect(r.data.session).to.equal('hook:ask:9');
      const run = await call(`${gw.hooks}/runs/${r.data.run}`, { token: ADMIN_TOKEN });
      expect(run.status, run.text).to.equal(200);
    });

    it('an idempotent repeat gets the same answer: status, content type and body', async () => {
      const headers = { 'idempotency-key': 'tell-once' };
      const first = await call(`${gw.hooks}/tell`, { token: TOKEN, json: { n: 4 }, headers });
      const again = await call(`${gw.hooks}/tell`, { token: TOKEN, json: { n: 4 }, headers });
      expect(again.status).to.equal(first.status).and.equal(201);
      expect(again.text).to.equal(first.text);
      expect(again.headers.get('content-type')).to.equal('text/plain');
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect((await events()).filter((t) => t === 'tell 4')).to.have.length(1);
    });

    it('status 204 acknowledges with no body, the action taken', async () => {
      const r = await call(`${gw.hooks}/quiet`, { token: TOKEN, json: { n: 1 } });
      expect(r.status).to.equal(204);
      expect(r.text).to.equal('');
      expect(await events()).to.include('quiet 1');
    });

    it('forEach: rendered once for the whole answer, from the first action and the list; a retried batch gets the same', async () => {
      const first = await call(`${gw.hooks}/batch`, { token: TOKEN, json: { items: [{ n: 1 }, { n: 2 }] } });
      expect(first.status, first.text).to.equal(200);
      expect(first.data.count).to.equal(2);
      const again = await call(`${gw.hooks}/batch`, { token: TOKEN, json: { items: [{ n: 1 }, { n: 2 }] } });
      expect(again.text).to.equal(first.text);
      expect((await events()).filter((t) => t.startsWith('item '))).to.have.members(['item 1', 'item 2']);
    });
  });
});
