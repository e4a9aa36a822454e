import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../support/in-process.js';
import { until } from '../support/gateway.js';
import { consoleCookie } from './console-client.js';
import { REQUEST_LOG } from '../support/request-log-sql.js';

const SECRET = 'replay-spec-signing-secret';
/** A hook name past the request log's 200-character path cap. */
const LONG = `l${'o'.repeat(240)}ng`;

interface Row { seq: number; route: string; status: number; event_ids: string | null; replayed: number; error: string | null; replay_of: number | null; body: string | null }

/** Replay's rules over plain HTTP: a new request to the route the first reached, through the current mappings, never an idempotent repeat. */
describe('console: replay of a kept request (plain HTTP)', function () {
  let gw: InProcess;
  let cookie: string;
  before(async () => {
    gw = await startInProcess({
      hooks: {
        keepBodies: 1,
        mappings: [
          { id: 'signed', match: { path: 'signed' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'signed {{n}}', verify: { scheme: 'github', secret: SECRET } },
          { id: 'keyed', match: { path: 'keyed' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'keyed {{n}}', idempotencyKey: 'k-{{n}}' },
          { id: 'form', match: { path: 'form' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'form {{n}}' },
          { id: 'long', match: { path: LONG }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'long {{n}}' },
          { id: 'paid', match: { path: 'shop', headers: { 'x-shop-event': 'order.paid' } }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'paid {{n}} from {{query.store}}' },
          { id: 'shop-other', match: { path: 'shop' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'other {{n}}' },
        ],
      },
    });
    cookie = await consoleCookie(gw.base);
  });
  after(() => gw.stop());

  const rows = (): Row[] => {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return db.prepare(`SELECT * FROM ${REQUEST_LOG} ORDER BY seq`).all() as Row[];
    } finally {
      db.close();
    }
  };
  const rowOf = (res: Response) => {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return db.prepare(`SELECT * FROM ${REQUEST_LOG} WHERE request_id = ?`).get(ids.get(res)) as Row;
    } finally {
      db.close();
    }
  };
  /** Replays the row `seq`; the new row, from where the console sends you. */
  async function replay(seq: number): Promise<Row> {
    const res = await fetch(`${gw.base}/console/replay/${seq}`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: gw.base } });
    expect(res.status).to.equal(303);
    const to = Number(res.headers.get('location')!.split('/').pop());
    expect(to).to.not.equal(seq);
    return rows().find((r) => r.seq === to)!;
  }
  /** Replays the row `seq` as {@link replay} does, recording what the console sent under the hooks path. */
  async function replayRecorded(seq: number): Promise<{ again: Row; sent: { url: string; headers: Record<string, string> }[] }> {
    const sent: { url: string; headers: Record<string, string> }[] = [];
    const real = globalThis.fetch;
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input);
      if (url.includes('/hooks/')) sent.push({ url, headers: { ...(init?.headers as Record<string, string>) } });
      return real(input, init);
    }) as typeof fetch;
    try {
      return { again: await replay(seq), sent };
    } finally {
      globalThis.fetch = real;
    }
  }
  // Each request names itself (X-Request-Id): its row keeps a sender's own plain id.
  const ids = new WeakMap<Response, string>();
  let n = 0;
  const hook = async (name: string, body: string, headers: Record<string, string> = {}) => {
    const id = `replay-spec-${++n}`;
    const res = await fetch(`${gw.hooks}/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-request-id': id, ...headers }, body });
    ids.set(res, id);
    return res;
  };

  /** The row of a request answered without an accept (buffered: it lands within a fraction of a second). */
  const loggedRow = (res: Response) => until('its request-log row', async () => rowOf(res));
  const replayPost = (seq: number) => fetch(`${gw.base}/console/replay/${seq}`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: gw.base } });
  const requestPage = async (seq: number) => (await fetch(`${gw.base}/console/requests/${seq}`, { headers: { cookie } })).text();
  const wakeEvents = async (text: string) => {
    const events = await (await fetch(`${gw.hooks}/events?limit=1000`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
    return events.events.filter((e: { text: string }) => e.text === text).length;
  };

  it('replays to exactly the path the request reached: /hooks/wake%3Fx and /hooks/signed%23frag (404, no mapping) go to hooks named wake?x and signed#frag again, never to wake or signed', async () => {
    const body = JSON.stringify({ text: 'rerouted', mode: 'next-heartbeat', n: 2 });
    const cases: [string, Record<string, string>][] = [
      ['wake%3Fx', {}],
      ['signed%23frag', { 'x-hub-signature-256': await githubSign(SECRET, body) }],
    ];
    for (const [name, headers] of cases) {
      const first = await hook(name, body, headers);
      expect(first.status, name).to.equal(404);
      const original = await loggedRow(first);
      expect(original).to.include({ route: 'unmatched', error: 'no_mapping', body });
      // A hook no mapping took can be replayed (add the mapping, then replay): to its own path.
      expect(await requestPage(original.seq)).to.include(`action="/console/replay/${original.seq}"`);
      const again = await replay(original.seq);
      expect(again, name).to.include({ route: 'unmatched', status: 404, error: 'no_mapping', replay_of: original.seq });
    }
    expect(await wakeEvents('rerouted')).to.equal(0);
    expect(rows().filter((r) => r.route === 'wake' || r.route === 'mapping:signed')).to.have.length(0);
  });

  it('refuses to replay to a route that checks a signature (the log never keeps a signature header): no Replay, 409 saying why', async () => {
    const body = JSON.stringify({ n: 1 });
    const first = await hook('signed', body, { 'x-hub-signature-256': await githubSign(SECRET, body) });
    expect(first.status).to.equal(200);
    const original = rowOf(first);
    const page = await requestPage(original.seq);
    expect(page).not.to.include(`action="/console/replay/${original.seq}"`);
    expect(page).to.include('checks a signature');
    const res = await replayPost(original.seq);
    expect(res.status).to.equal(409);
    expect(await res.text()).to.include('checks a signature');
    expect(rows().filter((r) => r.replay_of === original.seq)).to.have.length(0);
    // The marker from outside is nothing: a wrong nonce, the signature is checked.
    const forged = await hook('signed', body, { 'x-hookrelay-replay': `not-the-nonce:${original.seq}` });
    expect(forged.status).to.equal(401);
    expect((await forged.json()).error.code).to.equal('invalid_signature');
  });

  it('refuses to replay a request whose logged path was cut (the route it reached cannot be named again)', async () => {
    const first = await hook(LONG, JSON.stringify({ n: 9 }));
    expect(first.status).to.equal(200);
    const original = rowOf(first);
    expect(original.route).to.equal('mapping:long');
    const res = await replayPost(original.seq);
    expect(res.status).to.equal(409);
    expect(await res.text()).to.include('cannot be named again');
    expect(await requestPage(original.seq)).not.to.include(`action="/console/replay/${original.seq}"`);
  });

  it('sends no token: its marker is its credential, for the route it replays only, and once', async () => {
    const first = await hook('form', JSON.stringify({ n: 3 }));
    expect(first.status).to.equal(200);
    const original = rowOf(first);
    const { again, sent } = await replayRecorded(original.seq);
    expect(again).to.include({ route: 'mapping:form', status: 200, replay_of: original.seq });
    expect(sent).to.have.length(1);
    const [{ url, headers }] = sent as [{ url: string; headers: Record<string, string> }];
    expect(url).to.equal(`${gw.hooks}/form`);
    expect(Object.keys(headers).map((h) => h.toLowerCase())).not.to.include.members(['authorization']);
    expect(Object.keys(headers).map((h) => h.toLowerCase())).to.not.include('x-hookrelay-token');
    expect(url).not.to.include('token=');
    // The same marker, sent again (to its route or another): no credential at all.
    const { 'x-request-id': _id, ...marker } = headers;
    for (const to of ['form', 'wake', 'agent']) {
      const res = await fetch(`${gw.hooks}/${to}`, { method: 'POST', headers: marker, body: JSON.stringify({ n: 4, text: 'x', message: 'x' }) });
      expect(res.status, to).to.equal(401);
    }
  });

  it('a replay is a new request: never answered as an idempotent repeat, and it takes no key', async () => {
    const first = await hook('keyed', JSON.stringify({ n: 7 }));
    expect(first.status).to.equal(200);
    const repeat = await hook('keyed', JSON.stringify({ n: 7 }));
    expect(repeat.headers.get('idempotent-replayed')).to.equal('true');
    const original = rowOf(first);
    const again = await replay(original.seq);
    expect(again).to.include({ status: 200, replayed: 0, replay_of: original.seq });
    expect(again.event_ids).to.be.a('string').and.not.equal(original.event_ids);
    // The key still answers the original's repeats with the first answer.
    const later = await hook('keyed', JSON.stringify({ n: 7 }));
    expect(later.headers.get('idempotent-replayed')).to.equal('true');
    expect((await later.json()).eventId).to.equal(original.event_ids);
  });

  it('replays a refused body through the mappings as they are now, with its kept Content-Type (form data stays form data)', async () => {
    const first = await hook('form', 'n=5', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(first.status).to.equal(200);
    const again = await replay(rowOf(first).seq);
    expect(again).to.include({ route: 'mapping:form', status: 200 });
    const events = await (await fetch(`${gw.hooks}/events?limit=100`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
    expect(events.events.filter((e: { text: string }) => e.text === 'form 5')).to.have.length(2);
  });

  it('sends the kept headers and query again (never a credential): a mapping matching on match.headers takes the replay too', async () => {
    const id = `replay-spec-${++n}`;
    const first = await fetch(`${gw.hooks}/shop?store=berlin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-request-id': id, 'x-shop-event': 'order.paid', cookie: 'sid=secret-cookie', 'x-note': '<b>hi</b>' },
      body: JSON.stringify({ n: 11 }),
    });
    expect(first.status).to.equal(200);
    const original = (await until('its row', async () => rows().find((r) => (r as Row & { request_id: string }).request_id === id)))!;
    expect(original.route).to.equal('mapping:paid');
    // The request's page shows them, escaped as text like the body; never a credential.
    const page = await requestPage(original.seq);
    expect(page).to.include('x-shop-event: order.paid').and.include('x-note: &lt;b&gt;hi&lt;/b&gt;').and.include('store=berlin');
    expect(page).to.not.include('<b>hi</b>').and.not.include('secret-cookie').and.not.include(TOKEN);
    const { again, sent } = await replayRecorded(original.seq);
    expect(again).to.include({ route: 'mapping:paid', status: 200, replay_of: original.seq });
    expect(await wakeEvents('paid 11 from berlin')).to.equal(2);
    const [{ url, headers }] = sent as [{ url: string; headers: Record<string, string> }];
    expect(url).to.equal(`${gw.hooks}/shop?store=berlin`);
    expect(Object.keys(headers).map((h) => h.toLowerCase())).to.not.include.members(['authorization']);
    expect(Object.keys(headers).map((h) => h.toLowerCase())).to.not.include('cookie');
    expect(Object.keys(headers).map((h) => h.toLowerCase())).to.not.include('host');
  });

  it('refuses to replay what was refused before its route was known (409), and an unknown request (404)', async () => {
    const refused = await fetch(`${gw.hooks}/form`, { method: 'POST', body: '{}' }); // 401: refused before its body was read
    expect(refused.status).to.equal(401);
    const row = await until('the 401 row', () => rows().find((r) => r.status === 401 && r.error === 'unauthorized'), 5000);
    const res = await replayPost(row.seq);
    expect(res.status).to.equal(409);
    expect(await res.text()).to.include('refused before');
    const none = await fetch(`${gw.base}/console/replay/999999`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: gw.base } });
    expect(none.status).to.equal(404);
  });
});
