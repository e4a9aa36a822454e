import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { WebhooksHelper } from 'square';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `square` (CONTRACT.md §15): `x-square-hmacsha256-signature`, base64 HMAC-SHA256 with the
 * subscription's signature key of the notification URL followed by the body.
 * https://developer.squareup.com/docs/webhooks/step3validate. The `square` SDK only verifies
 * (WebhooksHelper.verifySignature), so requests are signed with node:crypto and each is first
 * accepted by it; and Square's own published test vector (the SDKs' WebhooksHelper tests, e.g.
 * square/square-nodejs-sdk tests: body, signature, key and URL) is accepted as it stands.
 */
const PUBLIC = 'https://hooks.example.com';
const SIGNATURE_KEY = 'sq-signature-key-0123456789';
const HEADER = 'x-square-hmacsha256-signature';

/** Square's published test vector. */
const VECTOR = {
  body: '{"merchant_id":"MLEFBHHSJGVHD","type":"webhooks.test_notification","event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2022-07-13T20:30:59.037339943Z","data":{"type":"webhooks","id":"bc368e64-01aa-407e-b46e-3231809b1129"}}',
  signature: 'GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4=',
  key: 'Ibxx_5AKakO-3qeNVR61Dw',
  url: 'https://webhook.site/679a4f3a-dcfa-49ee-bac5-9d0edad886b9',
};

/** A payment.updated notification as Square documents it: https://developer.squareup.com/reference/square/payments-api/webhooks/payment.updated */
const PAYMENT = JSON.stringify({
  merchant_id: '6SSW7HV8K2ST5',
  type: 'payment.updated',
  event_id: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc',
  created_at: '2020-02-06T21:27:34.308Z',
  data: { type: 'payment', id: 'hYy9pRFVxpDsO1FB05SunFWUe9JZY', object: { payment: { id: 'hYy9pRFVxpDsO1FB05SunFWUe9JZY', amount_money: { amount: 100, currency: 'USD' }, status: 'COMPLETED', location_id: 'S8GWD5R9QB376' } } },
});

const sign = (url: string, body: string, key = SIGNATURE_KEY) => createHmac('sha256', key).update(url + body).digest('base64');
const libraryAccepts = (url: string, body: string, signature: string, key = SIGNATURE_KEY) =>
  WebhooksHelper.verifySignature({ requestBody: body, signatureHeader: signature, signatureKey: key, notificationUrl: url });

describe('http: scheme square, signed over the notification URL and the body', () => {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({ server: { publicUrl: PUBLIC }, hooks: { mappings: [
      { id: 'square', match: { path: 'square' }, action: 'agent', messageTemplate: 'Square {{type}}: {{data.object.payment.status}}', auth: 'signature', verify: { scheme: 'square', secret: SIGNATURE_KEY } },
      { id: 'square-vector', match: { path: 'square-vector' }, action: 'agent', messageTemplate: 'Square {{type}}', auth: 'signature', verify: { scheme: 'square', secret: VECTOR.key, url: VECTOR.url } },
    ] } });
  });
  after(async () => { await gw.stop(); });
  const runCount = async () => (await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN })).data.runs.length;
  const post = (name: string, body: string, signature?: string) =>
    call(`${gw.hooks}/${name}`, { token: null, raw: body, headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { [HEADER]: signature }) } });

  it('accepts Square\'s published test vector, with verify.url as the notification URL', async () => {
    expect(await libraryAccepts(VECTOR.url, VECTOR.body, VECTOR.signature, VECTOR.key)).to.equal(true);
    const r = await post('square-vector', VECTOR.body, VECTOR.signature);
    expect(r.status, r.text).to.equal(202);
  });

  it('accepts a payment event signed over server.publicUrl joined with the path, as the library accepts it', async () => {
    const url = `${PUBLIC}/hooks/square`;
    const signature = sign(url, PAYMENT);
    expect(await libraryAccepts(url, PAYMENT, signature)).to.equal(true);
    const r = await post('square', PAYMENT, signature);
    expect(r.status, r.text).to.equal(202);
  });

  it('refuses a tampered body, a wrong key, another URL and a missing signature with 401 invalid_signature, acting on nothing', async () => {
    const before = await runCount();
    const url = `${PUBLIC}/hooks/square`;
    const good = sign(url, PAYMENT);
    const tampered = PAYMENT.replace('"amount":100', '"amount":100000');
    expect(await libraryAccepts(url, tampered, good)).to.equal(false);
    for (const [body, signature] of [
      [tampered, good],
      [PAYMENT, sign(url, PAYMENT, 'not-the-signature-key')],
      [PAYMENT, sign('https://elsewhere.example.com/hooks/square', PAYMENT)],
      [PAYMENT, undefined],
      [PAYMENT, 'not base64!'],
    ] as const) {
      const r = await post('square', body, signature);
      expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
    }
    expect(await runCount()).to.equal(before);
  });
});
