import { expect } from 'chai';
import { sign as githubSign } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/** Signatures over the real listener: per-mapping verify, `auth: signature`, the failure budget. */
const GITHUB_SECRET = 'github-signing-secret';
const STRIPE_SECRETS = ['whsec_stripe_new', 'whsec_stripe_old'];
const SVIX_SECRET = `whsec_${Buffer.from('svix signing key for the spec').toString('base64')}`;
const stripe = new Stripe('sk_test_spec');

const mappings = [
  // Token and signature both required (auth: token is the default).
  { id: 'github', match: { path: 'github' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'push {{ref}}', verify: { scheme: 'github', secret: GITHUB_SECRET } },
  // The signature stands in for the token.
  { id: 'stripe', match: { path: 'stripe' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'stripe {{type}}', auth: 'signature', verify: { scheme: 'stripe', secrets: STRIPE_SECRETS } },
  // Two mappings on one NAME: only `billing`'s signature stands in for the token.
  { id: 'billing', match: { path: 'svix', source: 'billing' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'billing {{id}}', auth: 'signature', verify: { scheme: 'standard-webhooks', secret: SVIX_SECRET } },
  { id: 'admin', match: { path: 'svix', source: 'admin' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'admin {{id}}', verify: { scheme: 'hmac', header: 'x-admin-signature', secret: 'admin-secret' } },
  { id: 'plain', match: { path: 'plain' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'plain {{id}}' },
];

const json = (value: unknown) => JSON.stringify(value);
const stripeHeader = (payload: string, o: { secret?: string; timestamp?: number } = {}) =>
  stripe.webhooks.generateTestHeaderString({ payload, secret: o.secret ?? STRIPE_SECRETS[0], timestamp: o.timestamp ?? Math.floor(Date.now() / 1000) });
const svixHeaders = (payload: string, secret = SVIX_SECRET) => {
  const id = `msg_${Math.random().toString(36).slice(2)}`;
  const at = new Date();
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, payload) };
};

describe('http: signatures (verify) and auth: signature', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });

  describe('verify with the token (auth: token)', () => {
    const payload = json({ ref: 'refs/heads/main' });

    it('accepts a valid signature with the token, and stores the event', async () => {
      const r = await call(`${gw.hooks}/github`, { token: TOKEN, raw: payload, headers: { 'x-hub-signature-256': await githubSign(GITHUB_SECRET, payload), 'content-type': 'application/json' } });
      expect(r.status, r.text).to.equal(200);
      const events = await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN });
      expect(events.data.events.map((e: { id: string }) => e.id)).to.include(r.data.eventId);
    });

    it('answers 401 invalid_signature to a missing, malformed or wrong signature, before parsing the body', async () => {
      for (const [what, headers, body] of [
        ['missing', {}, payload],
        ['malformed', { 'x-hub-signature-256': 'sha256=xyz' }, payload],
        ['wrong secret', { 'x-hub-signature-256': await githubSign('not-the-secret', payload) }, payload],
        ['tampered body', { 'x-hub-signature-256': await githubSign(GITHUB_SECRET, payload) }, payload.replace('main', 'evil')],
        ['invalid JSON', {}, '{not json'],
      ] as const) {
        const r = await call(`${gw.hooks}/github`, { token: TOKEN, raw: body, headers });
        expect(r.status, what).to.equal(401);
        expect(r.data.error.code, what).to.equal('invalid_signature');
        expect(r.data.error.message, what).to.include('X-Hub-Signature-256').and.not.include(GITHUB_SECRET);
      }
    });

    it('still needs the token: a valid signature alone is 401 unauthorized at the gate', async () => {
      const r = await call(`${gw.hooks}/github`, { raw: payload, headers: { 'x-hub-signature-256': await githubSign(GITHUB_SECRET, payload) } });
      expect(r.status).to.equal(401);
      expect(r.data.error.code).to.equal('unauthorized');
    });
  });

  describe('auth: signature', () => {
    const event = json({ id: 'evt_1', type: 'invoice.paid' });

    it('accepts a valid signature without the token, from either rotated secret', async () => {
      for (const secret of STRIPE_SECRETS) {
        const r = await call(`${gw.hooks}/stripe`, { raw: event, headers: { 'stripe-signature': stripeHeader(event, { secret }) } });
        expect(r.status, r.text).to.equal(200);
        expect(r.data).to.include({ ok: true, action: 'wake' });
      }
    });

    it('answers 401 without a signature, with a wrong one, and stale_signature to an old or future timestamp', async () => {
      const none = await call(`${gw.hooks}/stripe`, { raw: event });
      expect([none.status, none.data.error.code]).to.deep.equal([401, 'invalid_signature']);
      const wrong = await call(`${gw.hooks}/stripe`, { raw: event, headers: { 'stripe-signature': stripeHeader(event, { secret: 'whsec_retired' }) } });
      expect([wrong.status, wrong.data.error.code]).to.deep.equal([401, 'invalid_signature']);
      const now = Math.floor(Date.now() / 1000);
      for (const timestamp of [now - 600, now + 600]) {
        const stale = await call(`${gw.hooks}/stripe`, { raw: event, headers: { 'stripe-signature': stripeHeader(event, { timestamp }) } });
        expect([stale.status, stale.data.error.code]).to.deep.equal([401, 'stale_signature']);
      }
    });

    it('accepts the token too: a valid signature is still required', async () => {
      const r = await call(`${gw.hooks}/stripe`, { token: TOKEN, raw: event, headers: { 'stripe-signature': stripeHeader(event) } });
      expect(r.status, r.text).to.equal(200);
      const unsigned = await call(`${gw.hooks}/stripe`, { token: TOKEN, raw: event });
      expect(unsigned.data.error.code).to.equal('invalid_signature');
    });

    it('waives the token only for its own NAME: everything else under the hooks path still needs it', async () => {
      for (const [path, body] of [['/wake', json({ text: 'x' })], ['/plain', json({ id: 1 })], ['/github', event]] as const) {
        const r = await call(`${gw.hooks}${path}`, { raw: body, headers: { 'stripe-signature': stripeHeader(body) } });
        expect([r.status, r.data.error.code], path).to.deep.equal([401, 'unauthorized']);
      }
      const events = await call(`${gw.hooks}/events`, { headers: { 'stripe-signature': stripeHeader('') } });
      expect(events.status).to.equal(401);
    });

    it('after matching, acts only for an auth: signature mapping whose own signature verified', async () => {
      // Signed for `billing` (standard-webhooks), but the payload matches `admin`: no token, so 401.
      const adminBody = json({ id: 'a1', source: 'admin' });
      const viaBilling = await call(`${gw.hooks}/svix`, { raw: adminBody, headers: svixHeaders(adminBody) });
      expect([viaBilling.status, viaBilling.data.error.code]).to.deep.equal([401, 'unauthorized']);
      // With the token, `admin`'s own verify must have passed: billing's signature is not enough.
      const withToken = await call(`${gw.hooks}/svix`, { token: TOKEN, raw: adminBody, headers: svixHeaders(adminBody) });
      expect([withToken.status, withToken.data.error.code]).to.deep.equal([401, 'invalid_signature']);
      // And the matching pairs go through.
      const billingBody = json({ id: 'b1', source: 'billing' });
      expect((await call(`${gw.hooks}/svix`, { raw: billingBody, headers: svixHeaders(billingBody) })).status).to.equal(200);
      const adminSig = (await import('node:crypto')).createHmac('sha256', 'admin-secret').update(adminBody).digest('hex');
      expect((await call(`${gw.hooks}/svix`, { token: TOKEN, raw: adminBody, headers: { 'x-admin-signature': adminSig } })).status).to.equal(200);
      // The admin signature alone does not stand in for the token (admin is auth: token).
      const noToken = await call(`${gw.hooks}/svix`, { raw: adminBody, headers: { 'x-admin-signature': adminSig } });
      expect(noToken.status).to.equal(401);
    });

    it('checks the bytes as they arrived: a signed body that is not UTF-8 verifies, then fails to parse', async () => {
      const latin1 = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]); // {"id":"é"} in Latin-1
      const signature = (await import('node:crypto')).createHmac('sha256', 'admin-secret').update(latin1).digest('hex');
      const send = (sig: string) => fetch(`${gw.hooks}/svix`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'x-admin-signature': sig }, body: latin1 });
      const signed = await send(signature);
      expect(signed.status).to.equal(400);
      expect((await signed.json()).error.code).to.equal('invalid_json');
      const unsigned = await send('0'.repeat(64));
      expect(unsigned.status).to.equal(401);
    });

    it('keeps the body limit for a request without the token (413)', async () => {
      const big = json({ pad: 'x'.repeat(300_000) });
      const r = await call(`${gw.hooks}/stripe`, { raw: big, headers: { 'stripe-signature': stripeHeader(big) } });
      expect(r.status).to.equal(413);
    });
  });
});

describe('http: a failed signature counts in the failure budget', () => {
  let gw: InProcess;
  beforeEach(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  afterEach(async () => { await gw.stop(); });
  const event = json({ id: 'evt_2', type: 'charge.failed' });

  it('answers 429 from the 21st failed signature; a valid one is never blocked and resets the count', async () => {
    for (let i = 1; i <= 20; i++) {
      const r = await call(`${gw.hooks}/stripe`, { raw: event, headers: { 'stripe-signature': stripeHeader(event, { secret: 'whsec_guess' }) } });
      expect(r.status, `attempt ${i}`).to.equal(401);
    }
    const limited = await call(`${gw.hooks}/stripe`, { raw: event, headers: { 'stripe-signature': stripeHeader(event, { secret: 'whsec_guess' }) } });
    expect(limited.status).to.equal(429);
    expect(limited.data.error.code).to.equal('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    // Wrong tokens are blocked too: it is one budget.
    expect((await call(`${gw.hooks}/wake`, { token: 'bad', json: { text: 'x' } })).status).to.equal(429);
    // A valid signature goes through and clears the count.
    expect((await call(`${gw.hooks}/stripe`, { raw: event, headers: { 'stripe-signature': stripeHeader(event) } })).status).to.equal(200);
    expect((await call(`${gw.hooks}/stripe`, { raw: event })).status).to.equal(401);
  });

  it('wrong tokens and failed signatures add up', async () => {
    for (let i = 0; i < 10; i++) expect((await call(`${gw.hooks}/wake`, { token: 'bad', json: {} })).status).to.equal(401);
    for (let i = 0; i < 10; i++) expect((await call(`${gw.hooks}/stripe`, { raw: event })).status).to.equal(401);
    expect((await call(`${gw.hooks}/stripe`, { raw: event })).status).to.equal(429);
  });
});

describe('http: signature headers never reach templates', () => {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({ hooks: { mappings: [{ id: 'echo', match: { path: 'echo' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'headers {{headers}}', auth: 'signature', verify: { scheme: 'github', secret: GITHUB_SECRET } }] } });
  });
  after(async () => { await gw.stop(); });

  it('drops X-Hub-Signature-256 (and the other schemes\' signatures) from the template context', async () => {
    const payload = json({ a: 1 });
    const signature = await githubSign(GITHUB_SECRET, payload);
    const r = await call(`${gw.hooks}/echo`, { raw: payload, headers: { 'x-hub-signature-256': signature, 'stripe-signature': 't=1,v1=ab', 'x-kept': 'yes' } });
    expect(r.status, r.text).to.equal(200);
    const { data } = await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN });
    const text: string = data.events.find((e: { id: string }) => e.id === r.data.eventId).text;
    expect(text).to.include('x-kept').and.not.include(signature.slice(7)).and.not.include('stripe-signature');
  });
});
