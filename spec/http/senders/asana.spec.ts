import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { call, tmpDir } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `asana` (CONTRACT.md §15): Asana's handshake, a POST with `X-Hook-Secret`, answered 200
 * with the same header, and that secret kept in the store for the mapping; then each event's
 * `X-Hook-Signature`, a hex HMAC-SHA256 of the body with it. Asana's Node client does not
 * verify: requests are signed as Asana's guide and its example server do.
 * https://developers.asana.com/docs/webhooks-guide#security
 * https://developers.asana.com/reference/createwebhook
 * https://github.com/Asana/devrel-examples/blob/master/javascript/webhooks-nodejs/index.js
 *
 * Who may set the secret: the first handshake of a mapping keeps it; once one is kept, only a
 * handshake carrying the hooks token (e.g. `?token=` in the target URL) replaces it, so that a
 * stranger cannot swap in a secret of their own and sign events with it.
 */
const mappings = [{
  id: 'asana', match: { path: 'asana' }, action: 'wake', wakeMode: 'next-heartbeat', auth: 'signature',
  textTemplate: 'Asana {{events.0.action}} {{events.0.resource.resource_type}} {{events.0.resource.gid}}', verify: { scheme: 'asana' },
}];

const FIRST = 'b537207f20cbfa02357cf448134da559e8bd39d61597dcd5631b8012eae53e81';
const SECOND = '5e1a3c4f0b7d9e2a6c8f1b3d5e7a9c0b2d4f6a8c1e3b5d7f9a0c2e4b6d8f1a3c';
/** An event delivery, as the guide shows one. */
const changed = JSON.stringify({ events: [{ user: { gid: '1123', resource_type: 'user' }, created_at: '2018-03-27T19:37:57.224Z', action: 'changed', resource: { gid: '1337', resource_type: 'task', resource_subtype: 'default_task' }, parent: null, change: { field: 'name', action: 'changed' } }] });
const signature = (body: string, secret: string) => ({ 'content-type': 'application/json; charset=UTF-8', 'x-hook-signature': createHmac('sha256', secret).update(body).digest('hex') });
const handshake = (url: string, secret: string) => fetch(url, { method: 'POST', headers: { 'x-hook-secret': secret }, body: '' });

describe('http: scheme asana (X-Hook-Secret handshake)', () => {
  let gw: InProcess;
  const dir = tmpDir();
  before(async () => { gw = await startInProcess({ hooks: { mappings } }, dir); });
  after(async () => { await gw.stop(); });
  const eventCount = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.length;
  const post = (secret: string, body = changed) => call(`${gw.hooks}/asana`, { raw: body, headers: signature(body, secret) });

  it('refuses events before any handshake: no secret is kept yet', async () => {
    const r = await post(FIRST);
    expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    expect(r.data.error.message).to.include('X-Hook-Secret');
  });

  it('answers the first handshake 200 with the same X-Hook-Secret, and no action, without the hooks token', async () => {
    const before = await eventCount();
    const r = await handshake(`${gw.hooks}/asana`, FIRST);
    expect(r.status).to.equal(200);
    expect(r.headers.get('x-hook-secret')).to.equal(FIRST);
    expect(await eventCount()).to.equal(before);
  });

  it('acts on an event signed with the kept secret; refuses a tampered one or another secret\'s with 401', async () => {
    const r = await post(FIRST);
    expect(r.status, r.text).to.equal(200);
    const events = (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events;
    expect(events.find((e: { id: string }) => e.id === r.data.eventId).text).to.equal('Asana changed task 1337');
    const tampered = await call(`${gw.hooks}/asana`, { raw: changed.replace('1337', '1338'), headers: signature(changed, FIRST) });
    expect([tampered.status, tampered.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    const other = await post(SECOND);
    expect([other.status, other.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    expect(other.text).to.not.include(FIRST);
  });

  it('refuses a stranger\'s second handshake (401, not echoed, counted): the kept secret stays', async () => {
    const r = await handshake(`${gw.hooks}/asana`, SECOND);
    expect(r.status).to.equal(401);
    expect(r.headers.get('x-hook-secret')).to.equal(null);
    const data = await r.json() as { error: { code: string; message: string } };
    expect(data.error.code).to.equal('unauthorized');
    expect(data.error.message).to.include('hooks token').and.not.include(SECOND);
    expect((await post(FIRST)).status).to.equal(200);
    expect((await post(SECOND)).status).to.equal(401);
    // The same secret again is no change: Asana retrying its handshake is answered.
    expect((await handshake(`${gw.hooks}/asana`, FIRST)).headers.get('x-hook-secret')).to.equal(FIRST);
  });

  it('replaces the kept secret on a handshake that carries the hooks token', async () => {
    const r = await handshake(`${gw.hooks}/asana?token=${TOKEN}`, SECOND);
    expect([r.status, r.headers.get('x-hook-secret')]).to.deep.equal([200, SECOND]);
    expect((await post(SECOND)).status).to.equal(200);
    expect((await post(FIRST)).status).to.equal(401);
  });

  it('refuses an empty or over-long X-Hook-Secret (400), unanswered', async () => {
    for (const secret of ['', 'a'.repeat(257)]) {
      const r = await handshake(`${gw.hooks}/asana?token=${TOKEN}`, secret);
      expect(r.status, `${secret.length} characters`).to.equal(400);
      expect(r.headers.get('x-hook-secret')).to.equal(null);
    }
  });

  it('keeps the secret in the store: it verifies after a restart', async () => {
    await gw.stop();
    gw = await startInProcess({ hooks: { mappings } }, dir);
    expect((await post(SECOND)).status).to.equal(200);
  });
});
