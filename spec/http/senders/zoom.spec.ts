import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `zoom` (CONTRACT.md §15): `x-zm-signature: v0=<hex>`, an HMAC-SHA256 of
 * `v0:{x-zm-request-timestamp}:{body}` with the app's Secret Token, and Zoom's signed
 * `endpoint.url_validation` answered with `{plainToken, encryptedToken}`. Zoom has no Node
 * library that verifies: requests are signed as Zoom's own sample does (zoom/webhook-sample
 * index.js, which checks the signature before answering the validation).
 * https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events
 * https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint
 */
const SECRET_TOKEN = 'zoom-secret-token-0123456789';
const mappings = [{
  id: 'zoom', match: { path: 'zoom' }, action: 'wake', wakeMode: 'next-heartbeat', auth: 'signature',
  textTemplate: 'Zoom {{event}}: {{payload.payload.object.topic}}', verify: { scheme: 'zoom', secret: SECRET_TOKEN },
}];

/** Zoom's validation request: https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint */
const validation = '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_timestamp":1654503849680,"event":"endpoint.url_validation"}';
const started = JSON.stringify({ event: 'meeting.started', event_ts: 1626230691572, payload: { account_id: 'AAAAAABBBB', object: { id: '1234567890', uuid: '4444AAAiAAAAAiAiAiiAii==', host_id: 'x1yCzABCDEfg23HiJKl4mN', topic: 'My Meeting', type: 8, start_time: '2021-07-13T21:44:51Z', timezone: 'America/Los_Angeles', duration: 60 } } });

/** Zoom's sample: `v0=` + hex HMAC-SHA256(secret, `v0:${timestamp}:${body}`). */
const zoomHeaders = (body: string, o: { secret?: string; ts?: number } = {}) => {
  const ts = o.ts ?? Math.floor(Date.now() / 1000);
  return { 'content-type': 'application/json', 'x-zm-request-timestamp': String(ts), 'x-zm-signature': `v0=${createHmac('sha256', o.secret ?? SECRET_TOKEN).update(`v0:${ts}:${body}`).digest('hex')}` };
};

describe('http: scheme zoom', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const eventCount = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.length;

  it('answers a signed endpoint.url_validation with the plainToken and its HMAC, and no action', async () => {
    const before = await eventCount();
    const r = await call(`${gw.hooks}/zoom`, { raw: validation, headers: zoomHeaders(validation) });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    // The sample's answer: encryptedToken = hex HMAC-SHA256(secret, plainToken).
    expect(r.data).to.deep.equal({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: createHmac('sha256', SECRET_TOKEN).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex') });
    expect(await eventCount()).to.equal(before);
  });

  it('acts on a signed event without the hooks token', async () => {
    const r = await call(`${gw.hooks}/zoom`, { raw: started, headers: zoomHeaders(started) });
    expect(r.status, r.text).to.equal(200);
    const events = (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events;
    expect(events.find((e: { id: string }) => e.id === r.data.eventId).text).to.equal('Zoom meeting.started: My Meeting');
  });

  it('refuses a forged validation (unsigned, another secret, tampered) with 401 invalid_signature and no encryptedToken', async () => {
    const tampered = validation.replace('qgg8', 'xgg8');
    const cases: [string, string, Record<string, string>][] = [
      ['unsigned', validation, { 'content-type': 'application/json' }],
      ['another secret', validation, zoomHeaders(validation, { secret: 'not-the-secret-token' })],
      ['tampered', tampered, zoomHeaders(validation)],
    ];
    for (const [what, body, headers] of cases) {
      const r = await call(`${gw.hooks}/zoom`, { raw: body, headers });
      expect([r.status, r.data?.error?.code], what).to.deep.equal([401, 'invalid_signature']);
      expect(r.text, what).to.not.include('encryptedToken').and.not.include('gg8vlvZRS6');
    }
  });

  it('refuses a signature over a timestamp more than 300 s away with 401 stale_signature', async () => {
    for (const ts of [Math.floor(Date.now() / 1000) - 301, Math.floor(Date.now() / 1000) + 301]) {
      const r = await call(`${gw.hooks}/zoom`, { raw: started, headers: zoomHeaders(started, { ts }) });
      expect([r.status, r.data.error.code]).to.deep.equal([401, 'stale_signature']);
    }
  });

  it('answers 400 invalid_payload to a signed validation without a plainToken', async () => {
    const body = '{"payload":{},"event_ts":1654503849680,"event":"endpoint.url_validation"}';
    const r = await call(`${gw.hooks}/zoom`, { raw: body, headers: zoomHeaders(body) });
    expect([r.status, r.data.error.code]).to.deep.equal([400, 'invalid_payload']);
    expect(r.data.error.message).to.include('plainToken');
  });
});
