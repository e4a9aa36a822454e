import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `dropbox` (CONTRACT.md §15): `X-Dropbox-Signature`, a hex HMAC-SHA256 of the body with
 * the app secret, and the verification `GET ?challenge=C` echoed as text/plain with nosniff.
 * Dropbox has no Node library that verifies: requests are signed as its reference says.
 * https://www.dropbox.com/developers/reference/webhooks
 */
const APP_SECRET = 'dropbox-app-secret-0123';
const wake = { action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'Dropbox changes for {{list_folder.accounts.[0]}}' };
const mappings = [
  { id: 'dropbox', match: { path: 'dropbox' }, ...wake, auth: 'signature', verify: { scheme: 'dropbox', secret: APP_SECRET } },
  // auth: token (the default): the URL given to Dropbox carries ?token=.
  { id: 'dropbox-token', match: { path: 'dropbox-token' }, ...wake, verify: { scheme: 'dropbox', secret: APP_SECRET } },
];

/** A notification, as the reference shows it. */
const notification = '{"list_folder": {"accounts": ["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]}, "delta": {"users": [12345678]}}';
const sign = (body: string, secret = APP_SECRET) => ({ 'content-type': 'application/json', 'x-dropbox-signature': createHmac('sha256', secret).update(body).digest('hex') });

describe('http: scheme dropbox', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const eventCount = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.length;

  it('echoes the verification GET\'s challenge as text/plain with nosniff, exactly, and no action', async () => {
    const before = await eventCount();
    const r = await fetch(`${gw.hooks}/dropbox?challenge=WBvZ5LoP0sJ8fLBNhm3Ee6Zrd8xQ`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/plain/);
    expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(await r.text()).to.equal('WBvZ5LoP0sJ8fLBNhm3Ee6Zrd8xQ');
    expect(await eventCount()).to.equal(before);
  });

  it('acts on a signed notification without the hooks token', async () => {
    const r = await call(`${gw.hooks}/dropbox`, { raw: notification, headers: sign(notification) });
    expect(r.status, r.text).to.equal(200);
    const events = (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events;
    expect(events.find((e: { id: string }) => e.id === r.data.eventId).text).to.equal('Dropbox changes for dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc');
  });

  it('refuses an unsigned, tampered or wrongly keyed notification with 401 invalid_signature', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['unsigned', notification, { 'content-type': 'application/json' }],
      ['another secret', notification, sign(notification, 'another-app-secret')],
      ['tampered', notification.replace('12345678', '12345679'), sign(notification)],
    ];
    for (const [what, body, headers] of cases) {
      const r = await call(`${gw.hooks}/dropbox`, { raw: body, headers });
      expect([r.status, r.data.error.code], what).to.deep.equal([401, 'invalid_signature']);
      expect(r.data.error.message, what).to.include('X-Dropbox-Signature').and.not.include(APP_SECRET);
    }
  });

  it('refuses a verification GET without a challenge, or with one too long or with control characters, unanswered (400)', async () => {
    for (const query of ['', 'challenge=', `challenge=${'a'.repeat(1025)}`, 'challenge=a%0Ab']) {
      const r = await call(`${gw.hooks}/dropbox?${query}`);
      expect([r.status, r.data.error.code], query.slice(0, 20)).to.deep.equal([400, 'invalid_payload']);
      expect(r.data.error.message).to.include('challenge');
    }
  });

  it('without auth: signature the verification GET needs the hooks token, e.g. ?token= in the URL given to Dropbox', async () => {
    const none = await call(`${gw.hooks}/dropbox-token?challenge=abc`);
    expect([none.status, none.data.error.code]).to.deep.equal([401, 'unauthorized']);
    const r = await fetch(`${gw.hooks}/dropbox-token?challenge=abc&token=${TOKEN}`);
    expect([r.status, await r.text()]).to.deep.equal([200, 'abc']);
  });

  it('a POST carrying ?challenge= is an ordinary request: it needs its signature', async () => {
    const r = await call(`${gw.hooks}/dropbox?challenge=abc`, { raw: notification, headers: { 'content-type': 'application/json' } });
    expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
  });
});
