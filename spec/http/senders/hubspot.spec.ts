import { expect } from 'chai';
import { Signature } from '@hubspot/api-client';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `hubspot` (CONTRACT.md §15): `X-HubSpot-Signature-v3`, base64 HMAC-SHA256 with the app's
 * client secret of method + URI + body + `X-HubSpot-Request-Timestamp` (milliseconds), refused
 * past 5 minutes; the URI with HubSpot's listed `%XX` decoded.
 * https://developers.hubspot.com/docs/apps/developer-platform/build-apps/authentication/request-validation
 * Signed here by @hubspot/api-client's own Signature.getSignature (v3), and checked by its
 * Signature.isValid before being posted.
 */
const PUBLIC = 'https://hooks.example.com';
const CLIENT_SECRET = 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy';

/** HubSpot's example webhook batch: https://developers.hubspot.com/docs/api/webhooks#webhook-payloads */
const BATCH = JSON.stringify([
  { objectId: 1246965, propertyName: 'lifecyclestage', propertyValue: 'subscriber', changeSource: 'ACADEMY', eventId: 3816279340, subscriptionId: 25, portalId: 33, appId: 1160452, occurredAt: 1462216307945, subscriptionType: 'contact.propertyChange', attemptNumber: 0 },
  { objectId: 1246978, changeSource: 'IMPORT', eventId: 3816279480, subscriptionId: 22, portalId: 33, appId: 1160452, occurredAt: 1462216307945, subscriptionType: 'contact.creation', attemptNumber: 0 },
]);

function signed(method: string, url: string, body: string, opts: { secret?: string; timestamp?: number } = {}) {
  const timestamp = opts.timestamp ?? Date.now();
  const signature = Signature.getSignature(method, 'v3', { clientSecret: opts.secret ?? CLIENT_SECRET, requestBody: body, url, timestamp, signature: '' });
  const libraryAccepts = () => Signature.isValid({ signatureVersion: 'v3', method, url, requestBody: body, timestamp, signature, clientSecret: CLIENT_SECRET });
  return { headers: { 'content-type': 'application/json', 'x-hubspot-signature-v3': signature, 'x-hubspot-request-timestamp': String(timestamp) }, libraryAccepts };
}

describe('http: scheme hubspot (v3), signed by @hubspot/api-client', () => {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({ server: { publicUrl: PUBLIC }, hooks: { mappings: [
      { id: 'hubspot', match: { path: 'hubspot' }, action: 'wake', wakeMode: 'next-heartbeat', forEach: '*', textTemplate: 'HubSpot {{subscriptionType}} of {{objectId}}', auth: 'signature', verify: { scheme: 'hubspot', secret: CLIENT_SECRET } },
      // A CRM card's data fetch is a signed GET (method and URI signed, the body empty).
      { id: 'hubspot-card', match: { path: 'hubspot-card', method: 'GET' }, action: 'respond', respond: { body: '{"results":[]}' }, auth: 'signature', verify: { scheme: 'hubspot', secret: CLIENT_SECRET } },
    ] } });
  });
  after(async () => { await gw.stop(); });
  const texts = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.map((e: { text: string }) => e.text);

  it('accepts a signed batch (a top-level array), one action per event', async () => {
    const s = signed('POST', `${PUBLIC}/hooks/hubspot`, BATCH);
    expect(s.libraryAccepts()).to.equal(true);
    const r = await call(`${gw.hooks}/hubspot`, { token: null, raw: BATCH, headers: s.headers });
    expect(r.status, r.text).to.equal(200);
    expect(await texts()).to.include.members(['HubSpot contact.propertyChange of 1246965', 'HubSpot contact.creation of 1246978']);
  });

  it('signs the URI with its query, HubSpot\'s listed %XX decoded (%3A as :)', async () => {
    const s = signed('POST', `${PUBLIC}/hooks/hubspot?portal=33&since=2024-01-01T00:00:00Z`, BATCH);
    expect(s.libraryAccepts()).to.equal(true);
    const r = await call(`${gw.hooks}/hubspot?portal=33&since=2024-01-01T00%3A00%3A00Z`, { token: null, raw: BATCH, headers: s.headers });
    expect(r.status, r.text).to.equal(200);
  });

  it('verifies a signed GET over its method and URI', async () => {
    const s = signed('GET', `${PUBLIC}/hooks/hubspot-card?userId=1&portalId=33`, '');
    expect(s.libraryAccepts()).to.equal(true);
    const r = await call(`${gw.hooks}/hubspot-card?userId=1&portalId=33`, { method: 'GET', token: null, headers: { 'x-hubspot-signature-v3': s.headers['x-hubspot-signature-v3'], 'x-hubspot-request-timestamp': s.headers['x-hubspot-request-timestamp'] } });
    expect([r.status, r.text]).to.deep.equal([200, '{"results":[]}']);
    // The same signature for a POST is another request.
    const post = await call(`${gw.hooks}/hubspot-card?userId=1&portalId=33`, { method: 'GET', token: null, headers: { 'x-hubspot-signature-v3': signed('POST', `${PUBLIC}/hooks/hubspot-card?userId=1&portalId=33`, '').headers['x-hubspot-signature-v3'], 'x-hubspot-request-timestamp': s.headers['x-hubspot-request-timestamp'] } });
    expect([post.status, post.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    expect(post.data.error.message).to.match(/^GET \/hooks\/hubspot-card needs a valid signature: /);
  });

  it('refuses a tampered body, a wrong secret, another URL, a changed timestamp and a missing signature with 401 invalid_signature', async () => {
    const before = (await texts()).length;
    const url = `${PUBLIC}/hooks/hubspot`;
    const good = signed('POST', url, BATCH);
    const tampered = BATCH.replace('subscriber', 'customer');
    const wrong = signed('POST', url, BATCH, { secret: 'not-the-client-secret' });
    const elsewhere = signed('POST', 'https://elsewhere.example.com/hooks/hubspot', BATCH);
    expect(wrong.libraryAccepts()).to.equal(false);
    const shifted = { ...good.headers, 'x-hubspot-request-timestamp': String(Number(good.headers['x-hubspot-request-timestamp']) - 1) };
    const { 'x-hubspot-signature-v3': _dropped, ...unsigned } = good.headers;
    for (const [body, headers] of [[tampered, good.headers], [BATCH, wrong.headers], [BATCH, elsewhere.headers], [BATCH, shifted], [BATCH, unsigned]] as const) {
      const r = await call(`${gw.hooks}/hubspot`, { token: null, raw: body, headers });
      expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
    }
    expect((await texts()).length).to.equal(before);
  });

  it('refuses a timestamp more than 5 minutes old with 401 stale_signature, as the library does', async () => {
    const s = signed('POST', `${PUBLIC}/hooks/hubspot`, BATCH, { timestamp: Date.now() - 301_000 });
    expect(() => s.libraryAccepts()).to.throw('Timestamp is invalid');
    const r = await call(`${gw.hooks}/hubspot`, { token: null, raw: BATCH, headers: s.headers });
    expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'stale_signature']);
    // A fresh one from the same secret still passes.
    const fresh = signed('POST', `${PUBLIC}/hooks/hubspot`, BATCH);
    expect((await call(`${gw.hooks}/hubspot`, { token: null, raw: BATCH, headers: fresh.headers })).status).to.equal(200);
  });
});
