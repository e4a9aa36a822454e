import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `twitch` (CONTRACT.md §15): EventSub's `Twitch-Eventsub-Message-Signature: sha256=<hex>`,
 * an HMAC-SHA256 of message id + timestamp + body; the webhook_callback_verification answered
 * with its challenge as text/plain; the signed message id is the idempotency key. Twitch has no
 * Node library that verifies: requests are signed as Twitch's published example does.
 * https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message
 * https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#responding-to-a-challenge-request
 * https://dev.twitch.tv/docs/eventsub/#guarding-against-replay-attacks (10 minutes)
 */
const SECRET = 'twitch-eventsub-secret-0123456789';
const mappings = [{
  id: 'twitch', match: { path: 'twitch' }, action: 'wake', wakeMode: 'next-heartbeat', auth: 'signature',
  textTemplate: 'Twitch {{subscription.type}}: {{event.broadcaster_user_name}}', verify: { scheme: 'twitch', secret: SECRET },
}];

const subscription = { id: 'f1c2a387-161a-49f9-a165-0f21d7a4e1c4', status: 'webhook_callback_verification_pending', type: 'stream.online', version: '1', cost: 1, condition: { broadcaster_user_id: '12826' }, transport: { method: 'webhook', callback: 'https://example.com/webhooks/callback' }, created_at: '2019-11-16T10:11:12.634234626Z' };
const verification = JSON.stringify({ challenge: 'pogchamp-kappa-360noscope-vohiyo', subscription });
const online = JSON.stringify({ subscription: { ...subscription, status: 'enabled' }, event: { id: '9001', broadcaster_user_id: '12826', broadcaster_user_login: 'twitch', broadcaster_user_name: 'Twitch', type: 'live', started_at: '2020-10-11T10:11:12.123Z' } });

/** RFC 3339 with nanoseconds, as Twitch sends it. */
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1456789Z');
/** Twitch's example: HMAC_PREFIX + hex HMAC-SHA256(secret, id + timestamp + body). */
const twitchHeaders = (body: string, o: { type?: string; id?: string; secret?: string; at?: number } = {}) => {
  const id = o.id ?? randomUUID();
  const ts = rfc3339(o.at ?? Date.now());
  return {
    'content-type': 'application/json',
    'twitch-eventsub-message-id': id,
    'twitch-eventsub-message-retry': '0',
    'twitch-eventsub-message-type': o.type ?? 'notification',
    'twitch-eventsub-message-timestamp': ts,
    'twitch-eventsub-message-signature': `sha256=${createHmac('sha256', o.secret ?? SECRET).update(id + ts + body).digest('hex')}`,
    'twitch-eventsub-subscription-type': 'stream.online',
    'twitch-eventsub-subscription-version': '1',
  };
};

describe('http: scheme twitch (EventSub webhooks)', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const eventCount = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.length;

  it('answers a signed webhook_callback_verification with the challenge as text/plain, exactly, and no action', async () => {
    const before = await eventCount();
    const r = await call(`${gw.hooks}/twitch`, { raw: verification, headers: twitchHeaders(verification, { type: 'webhook_callback_verification' }) });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/plain/);
    expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(r.text).to.equal('pogchamp-kappa-360noscope-vohiyo');
    expect(await eventCount()).to.equal(before);
  });

  it('acts on a signed notification without the hooks token', async () => {
    const r = await call(`${gw.hooks}/twitch`, { raw: online, headers: twitchHeaders(online) });
    expect(r.status, r.text).to.equal(200);
    const events = (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events;
    expect(events.find((e: { id: string }) => e.id === r.data.eventId).text).to.equal('Twitch stream.online: Twitch');
  });

  it('refuses a forged verification (unsigned, another secret, tampered) with 401 invalid_signature, without the challenge', async () => {
    const signedOk = twitchHeaders(verification, { type: 'webhook_callback_verification' });
    const { 'twitch-eventsub-message-signature': _, ...unsigned } = signedOk;
    const cases: [string, string, Record<string, string>][] = [
      ['unsigned', verification, unsigned],
      ['another secret', verification, twitchHeaders(verification, { type: 'webhook_callback_verification', secret: 'another-secret-0123456789' })],
      ['tampered', verification.replace('pogchamp', 'kappa'), signedOk],
    ];
    for (const [what, body, headers] of cases) {
      const r = await call(`${gw.hooks}/twitch`, { raw: body, headers });
      expect([r.status, r.data?.error?.code], what).to.deep.equal([401, 'invalid_signature']);
      expect(r.text, what).to.not.include('360noscope');
    }
  });

  it('takes a timestamp up to 10 minutes old, and refuses an older one with 401 stale_signature', async () => {
    const fresh = await call(`${gw.hooks}/twitch`, { raw: online, headers: twitchHeaders(online, { at: Date.now() - 9 * 60_000 }) });
    expect(fresh.status, fresh.text).to.equal(200);
    const stale = await call(`${gw.hooks}/twitch`, { raw: online, headers: twitchHeaders(online, { at: Date.now() - 11 * 60_000 }) });
    expect([stale.status, stale.data.error.code]).to.deep.equal([401, 'stale_signature']);
  });

  it('keys on the signed message id: a redelivery is answered again, and no unsigned Idempotency-Key replaces it', async () => {
    const before = await eventCount();
    const id = randomUUID();
    const first = await call(`${gw.hooks}/twitch`, { raw: online, headers: twitchHeaders(online, { id }) });
    const again = await call(`${gw.hooks}/twitch`, { raw: online, headers: twitchHeaders(online, { id }) });
    expect(first.status, first.text).to.equal(200);
    expect([again.status, again.headers.get('idempotent-replayed'), again.data.eventId]).to.deep.equal([200, 'true', first.data.eventId]);
    // Two messages under one unsigned key header: two events, each under its own signed id.
    const a = await call(`${gw.hooks}/twitch`, { raw: online, headers: { ...twitchHeaders(online), 'idempotency-key': 'same-key' } });
    const b = await call(`${gw.hooks}/twitch`, { raw: online, headers: { ...twitchHeaders(online), 'idempotency-key': 'same-key' } });
    expect([a.status, b.status, b.headers.get('idempotent-replayed')]).to.deep.equal([200, 200, null]);
    expect(a.data.eventId).to.not.equal(b.data.eventId);
    expect(await eventCount()).to.equal(before + 3);
  });
});
