import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../support/in-process.js';

const SECRET = 'replay-spec-signing-secret';

interface Row { seq: number; route: string; status: number; event_ids: string | null; replayed: number; error: string | null; replay_of: number | null; body: string | null }

/** Replay's rules over plain HTTP: a new request through the current mappings, past verify, never an idempotent repeat. */
describe('console: replay of a kept request (plain HTTP)', function () {
  this.timeout(30_000);
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
        ],
      },
    });
    const res = await fetch(`${gw.base}/console/login`, { method: 'POST', redirect: 'manual', headers: { origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${ADMIN_TOKEN}` });
    cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  });
  after(() => gw.stop());

  const rows = (): Row[] => {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return db.prepare('SELECT * FROM requests ORDER BY seq').all() as Row[];
    } finally {
      db.close();
    }
  };
  const rowOf = (res: Response) => {
    const db = new Database(path.join(gw.dir, 'data', 'hookrelay.db'), { readonly: true });
    try {
      return db.prepare('SELECT * FROM requests WHERE request_id = ?').get(ids.get(res)) as Row;
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
  // Each request names itself (X-Request-Id): its row keeps a sender's own plain id.
  const ids = new WeakMap<Response, string>();
  let n = 0;
  const hook = async (name: string, body: string, headers: Record<string, string> = {}) => {
    const id = `replay-spec-${++n}`;
    const res = await fetch(`${gw.hooks}/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-request-id': id, ...headers }, body });
    ids.set(res, id);
    return res;
  };

  it('replays a signed request without its signature (the operator vouches for it), logged as a replay of the first', async () => {
    const body = JSON.stringify({ n: 1 });
    const first = await hook('signed', body, { 'x-hub-signature-256': await githubSign(SECRET, body) });
    expect(first.status).to.equal(200);
    const original = rowOf(first);
    const again = await replay(original.seq);
    expect(again).to.include({ route: 'mapping:signed', status: 200, replay_of: original.seq, body, error: null });
    expect(again.event_ids).to.be.a('string').and.not.equal(original.event_ids);
    // The same marker from outside is nothing: a wrong nonce, the signature is checked.
    const forged = await hook('signed', body, { 'x-hookrelay-replay': `not-the-nonce:${original.seq}` });
    expect(forged.status).to.equal(401);
    expect((await forged.json()).error.code).to.equal('invalid_signature');
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

  it('refuses to replay what has no kept body (409), and an unknown request (404)', async () => {
    const refused = await fetch(`${gw.hooks}/form`, { method: 'POST', body: '{}' }); // 401: refused before its body was read
    expect(refused.status).to.equal(401);
    let row: Row | undefined;
    for (let i = 0; i < 40 && !row; i++) {
      await new Promise((r) => setTimeout(r, 50));
      row = rows().find((r) => r.status === 401 && r.error === 'unauthorized');
    }
    const res = await fetch(`${gw.base}/console/replay/${row!.seq}`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: gw.base } });
    expect(res.status).to.equal(409);
    const none = await fetch(`${gw.base}/console/replay/999999`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: gw.base } });
    expect(none.status).to.equal(404);
  });
});
