import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { sender } from '../../../src/senders/index.js';
import type { VerifyKeys } from '../../../src/senders/descriptor.js';
import { signRequest } from '../../../src/senders/verify.js';
import { call } from '../../support/gateway.js';
import { startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { SENDER_CASES, type Sent } from '../../support/sender-cases.js';

/**
 * The HMAC and token senders of the catalog (CONTRACT.md §15) on the real listener: a request
 * signed as the sender signs it (its library, else its published example: spec/support/sender-cases.ts)
 * is acted on with no hooks token (`auth: signature`); a tampered one, one signed with another
 * key and an old one are 401 with the contract's code; and what `sign: true` makes is what the
 * sender's own library accepts.
 */
const mapping = (scheme: string, verify: Record<string, unknown>, path = scheme) =>
  ({ id: path, match: { path }, auth: 'signature', verify, action: 'wake', textTemplate: `${scheme} event` });

describe('http: the sender catalog, HMAC and token schemes', () => {
  let gw: InProcess;
  before(async () => {
    const mappings = SENDER_CASES.flatMap((c) => [mapping(c.scheme, c.verify), mapping(c.scheme, c.wrong, `${c.scheme}-other`)]);
    gw = await startInProcess({ hooks: { mappings } });
  });
  after(async () => { await gw.stop(); });
  const post = (path: string, s: Sent) => call(`${gw.hooks}/${path}`, { raw: s.body, headers: s.headers });
  const now = () => Math.floor(Date.now() / 1000);

  for (const c of SENDER_CASES) {
    describe(c.scheme, () => {
      it('acts on a request signed as the sender signs it, with no hooks token (auth: signature)', async () => {
        const r = await post(c.scheme, c.sign(c.verify, c.body, now()));
        expect(r.status, r.text).to.equal(200);
        expect(r.data).to.include({ ok: true, action: 'wake' });
      });

      it('refuses a request signed with another key: 401 invalid_signature, naming no secret', async () => {
        const r = await post(`${c.scheme}-other`, c.sign(c.verify, c.body, now()));
        expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
        for (const value of Object.values(c.verify)) if (value !== c.scheme) expect(r.text).to.not.include(String(value));
      });

      if (c.tamper) {
        it('refuses a tampered request: 401 invalid_signature', async () => {
          const r = await post(c.scheme, c.tamper!(c.sign(c.verify, c.body, now())));
          expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
        });
      }

      if (c.tolerance !== undefined) {
        it(`refuses a timestamp more than ${c.tolerance} s old, and one as far ahead: 401 stale_signature`, async () => {
          for (const at of [now() - c.tolerance! - 30, now() + c.tolerance! + 30]) {
            const r = await post(c.scheme, c.sign(c.verify, c.body, at));
            expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'stale_signature']);
          }
        });
      }

      it('the unsigned request needs the signature: 401 invalid_signature without it, even with the hooks token', async () => {
        const r = await call(`${gw.hooks}/${c.scheme}`, { raw: c.body, token: TOKEN, headers: { 'content-type': c.contentType ?? 'application/json' } });
        expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
      });

      if (c.accepts) {
        it('sign: true makes what the sender\'s own library accepts, and the listener too', async () => {
          const signed = signRequest(sender(c.scheme), c.verify as unknown as VerifyKeys, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from(c.body), now: now() });
          const sent = { headers: { 'content-type': 'application/json', ...signed.headers }, body: signed.body.toString() };
          expect(await c.accepts!(sent, c.verify)).to.equal(true);
          expect(await c.accepts!({ ...sent, body: `${sent.body} ` }, c.verify)).to.equal(false);
          expect((await post(c.scheme, sent)).status).to.equal(200);
        });
      }
    });
  }

  describe('sender particulars', () => {
    it('linear: a body without its webhookTimestamp is refused, as @linear/sdk refuses it', async () => {
      const body = JSON.stringify({ action: 'create', type: 'Issue' });
      const r = await post('linear', { headers: { 'content-type': 'application/json', 'linear-signature': createHmac('sha256', 'lin_wh_spec').update(body).digest('hex') }, body });
      expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
      expect(r.data.error.message).to.match(/webhookTimestamp\) is missing/);
    });

    it('mailgun: a form body (routes, legacy webhooks) carries the signature in its fields, and the primary account\'s parent-signature verifies too', async () => {
      const at = now();
      const token = 'b'.repeat(50);
      const sig = (key: string) => createHmac('sha256', key).update(`${at}${token}`).digest('hex');
      const form = new URLSearchParams({ recipient: 'ada@example.com', timestamp: String(at), token, signature: sig('key-mailgun-spec') }).toString();
      const r = await post('mailgun', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
      expect(r.status, r.text).to.equal(200);
      const sub = JSON.stringify({ signature: { timestamp: String(at), token, signature: sig('key-subaccount'), 'parent-signature': sig('key-mailgun-spec') }, 'event-data': {} });
      expect((await post('mailgun', { headers: { 'content-type': 'application/json' }, body: sub })).status).to.equal(200);
    });

    it('pagerduty: a header with only a retired secret\'s signature is refused', async () => {
      const body = '{"event":{"event_type":"incident.triggered"}}';
      const r = await post('pagerduty', { headers: { 'content-type': 'application/json', 'x-pagerduty-signature': `v1=${createHmac('sha256', 'pd-retired').update(body).digest('hex')}` }, body });
      expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    });

    it('telegram and gitlab: a token that differs only in length or case is refused', async () => {
      for (const [path, header, token] of [['telegram', 'x-telegram-bot-api-secret-token', 'spec_secret-Token_1'], ['gitlab', 'x-gitlab-token', 'glpat-like-spec-token']]) {
        for (const given of [`${token}x`, token.slice(0, -1), token.toUpperCase()]) {
          const r = await post(path!, { headers: { 'content-type': 'application/json', [header!]: given }, body: '{}' });
          expect([r.status, r.data.error.code], `${path} ${given}`).to.deep.equal([401, 'invalid_signature']);
        }
      }
    });

    it('clerk: the signed svix-id is the idempotency key: a resent delivery is a replay', async () => {
      const c = SENDER_CASES.find((x) => x.scheme === 'clerk')!;
      const sent = c.sign(c.verify, c.body, now());
      const first = await post('clerk', sent);
      const again = await post('clerk', sent);
      expect([first.status, again.status]).to.deep.equal([200, 200]);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.text).to.equal(first.text);
    });
  });
});
