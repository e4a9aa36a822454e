import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import sendgrid from '@sendgrid/eventwebhook';
import { configFromObject } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/config/errors.js';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `sendgrid` (CONTRACT.md §15): SendGrid's signed Event Webhook, an ECDSA P-256 (SHA-256)
 * signature, base64 DER, in `X-Twilio-Email-Event-Webhook-Signature`, over
 * `X-Twilio-Email-Event-Webhook-Timestamp` followed by the body, checked with the verification
 * key SendGrid shows (base64). @sendgrid/eventwebhook only verifies, so the requests are signed
 * with node:crypto and each is first accepted by the library's own EventWebhook.verifySignature.
 * https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features
 */
const { EventWebhook } = sendgrid;
const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';

/** SendGrid's example delivery events: https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/event#delivery-events */
const EVENTS = JSON.stringify([
  { email: 'example@test.com', timestamp: 1513299569, 'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>', event: 'processed', category: 'cat facts', sg_event_id: 'sg_event_id', sg_message_id: 'sg_message_id' },
  { email: 'example@test.com', timestamp: 1513299569, 'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>', event: 'deferred', category: 'cat facts', sg_event_id: 'sg_event_id', sg_message_id: 'sg_message_id', response: '400 try again later', attempt: '5' },
  { email: 'example@test.com', timestamp: 1513299569, 'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>', event: 'delivered', category: 'cat facts', sg_event_id: 'sg_event_id', sg_message_id: 'sg_message_id', response: '250 OK' },
]);

function keyPair(): { publicKey: string; privateKey: KeyObject } {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { publicKey: pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'), privateKey: pair.privateKey };
}

const sender = keyPair();
const stranger = keyPair();

/** The headers SendGrid would send with `body`, signed with `key` at `ts`. */
function signed(body: string, key = sender.privateKey, ts = String(Math.floor(Date.now() / 1000))): Record<string, string> {
  const signature = sign('sha256', Buffer.from(ts + body), { key, dsaEncoding: 'der' }).toString('base64');
  return { 'content-type': 'application/json', [SIGNATURE]: signature, [TIMESTAMP]: ts };
}

/** What SendGrid's own library says of a request. */
function libraryAccepts(body: string, headers: Record<string, string>, publicKey = sender.publicKey): boolean {
  const ew = new EventWebhook();
  return ew.verifySignature(ew.convertPublicKeyToECDSA(publicKey), body, headers[SIGNATURE]!, headers[TIMESTAMP]!);
}

describe('http: scheme sendgrid (ECDSA P-256), each request accepted by @sendgrid/eventwebhook first', () => {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({ hooks: { mappings: [
      { id: 'sendgrid', match: { path: 'sendgrid' }, action: 'wake', wakeMode: 'next-heartbeat', forEach: '*', textTemplate: 'SendGrid: {{event}} for {{email}}', auth: 'signature', verify: { scheme: 'sendgrid', publicKey: sender.publicKey } },
    ] } });
  });
  after(async () => { await gw.stop(); });
  const events = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.map((e: { text: string }) => e.text);

  it('accepts a signed batch of events, one action per event (forEach: "*")', async () => {
    const headers = signed(EVENTS);
    expect(libraryAccepts(EVENTS, headers)).to.equal(true);
    const r = await call(`${gw.hooks}/sendgrid`, { token: null, raw: EVENTS, headers });
    expect(r.status, r.text).to.equal(200);
    expect(r.data.actions).to.have.length(3);
    expect(await events()).to.include.members(['SendGrid: processed for example@test.com', 'SendGrid: deferred for example@test.com', 'SendGrid: delivered for example@test.com']);
  });

  it('refuses a tampered body, a tampered timestamp, another key\'s signature and a missing one with 401 invalid_signature, acting on nothing', async () => {
    const before = (await events()).length;
    const good = signed(EVENTS);
    const tampered = EVENTS.replace('deferred', 'bounce');
    const otherTs = { ...good, [TIMESTAMP]: String(Number(good[TIMESTAMP]) + 1) };
    const strangers = signed(EVENTS, stranger.privateKey);
    const { [SIGNATURE]: _dropped, ...unsigned } = good;
    expect(libraryAccepts(tampered, good)).to.equal(false);
    expect(libraryAccepts(EVENTS, otherTs)).to.equal(false);
    expect(libraryAccepts(EVENTS, strangers)).to.equal(false);
    for (const [body, headers] of [[tampered, good], [EVENTS, otherTs], [EVENTS, strangers], [EVENTS, unsigned]] as const) {
      const r = await call(`${gw.hooks}/sendgrid`, { token: null, raw: body, headers });
      expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
    }
    // Not base64 DER at all: refused as malformed, never thrown.
    const r = await call(`${gw.hooks}/sendgrid`, { token: null, raw: EVENTS, headers: { ...good, [SIGNATURE]: 'bm90IGEgc2lnbmF0dXJl' } });
    expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    expect((await events()).length).to.equal(before);
  });
});

describe('config: scheme sendgrid takes the verification key', () => {
  const load = (verify: Record<string, unknown>) => configFromObject({ hooks: { token: TOKEN, mappings: [{ id: 's', match: { path: 'sendgrid' }, messageTemplate: 'x', verify: { scheme: 'sendgrid', ...verify } }] } }, '/srv/hookrelay.yaml', {});
  const problems = (verify: Record<string, unknown>) => {
    try {
      load(verify);
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    return [];
  };

  it('loads with the base64 key SendGrid shows, and with the same key as PEM', () => {
    expect(() => load({ publicKey: sender.publicKey })).to.not.throw();
    const pem = `-----BEGIN PUBLIC KEY-----\n${sender.publicKey}\n-----END PUBLIC KEY-----\n`;
    expect(() => load({ publicKey: pem })).to.not.throw();
  });

  it('refuses a missing key, one that is not an EC P-256 public key, and a shared secret, at verify\'s path, never quoting the value', () => {
    const notAKey = 'bm90IGEga2V5';
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    for (const [verify, path] of [
      [{}, 'hooks.mappings[0].verify.publicKey'],
      [{ publicKey: notAKey }, 'hooks.mappings[0].verify.publicKey'],
      [{ publicKey: rsa }, 'hooks.mappings[0].verify.publicKey'],
      [{ publicKey: sender.publicKey, secret: 's' }, 'hooks.mappings[0].verify.secret'],
    ] as const) {
      const found = problems(verify);
      expect(found.map((p) => p.path), JSON.stringify(found)).to.include(path);
      expect(JSON.stringify(found)).to.not.include(notAKey);
    }
  });
});
