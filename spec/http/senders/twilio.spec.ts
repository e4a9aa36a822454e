import { expect } from 'chai';
import twilio from 'twilio';
import { configFromObject } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/config/errors.js';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `twilio` (CONTRACT.md §15): `X-Twilio-Signature`, HMAC-SHA1 base64 of the URL Twilio was
 * given followed by the form fields sorted by name, or, for a JSON body, of the URL whose
 * `bodySHA256` parameter is the body's SHA-256. Signed here by Twilio's own library (`twilio`:
 * getExpectedTwilioSignature), and checked by it (validateRequest, validateRequestWithBody) before
 * being posted. https://www.twilio.com/docs/usage/security#validating-requests
 */
const AUTH_TOKEN = '12345';
const PUBLIC = 'https://hooks.example.com';
/** Twilio's published example request (the page above): a call's fields, and a query on the URL. */
const CALL = { CallSid: 'CA1234567890ABCDE', Caller: '+14158675310', Digits: '1234', From: '+14158675310', To: '+18005551212' };
/** An SMS as Twilio posts it: https://www.twilio.com/docs/messaging/guides/webhook-request */
const SMS = { ToCountry: 'US', SmsMessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', NumMedia: '0', SmsSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', SmsStatus: 'received', Body: 'Is the build green? ✓', FromCountry: 'US', To: '+18005551212', MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f', AccountSid: 'ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX', From: '+14158675310', ApiVersion: '2010-04-01' };

const agent = { action: 'agent', messageTemplate: 'SMS from {{From}}: {{Body}}' };
const mappings = [
  { id: 'twilio', match: { path: 'twilio' }, ...agent, auth: 'signature', verify: { scheme: 'twilio', secret: AUTH_TOKEN } },
  // Behind a proxy that rewrites the path: the URL Twilio was given, named outright.
  { id: 'twilio-proxied', match: { path: 'twilio-proxied' }, ...agent, auth: 'signature', verify: { scheme: 'twilio', secret: AUTH_TOKEN, url: 'https://proxy.example.org/sms' } },
  // auth: token: the URL given to Twilio carries ?token=, and Twilio signs it with the rest of the URL.
  { id: 'twilio-token', match: { path: 'twilio-token' }, ...agent, verify: { scheme: 'twilio', secrets: ['rotated-out', AUTH_TOKEN] } },
  { id: 'twilio-json', match: { path: 'twilio-json' }, action: 'agent', messageTemplate: 'JSON {{property}}', auth: 'signature', verify: { scheme: 'twilio', secret: AUTH_TOKEN } },
];

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const formHeaders = (signature: string) => ({ 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature });

describe('http: scheme twilio, signed by the twilio library', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ server: { publicUrl: PUBLIC }, hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const runCount = async () => (await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN })).data.runs.length;

  /** A form post to `{hooks}/NAME?QUERY` signed over `url` (default: server.publicUrl joined with the path and query). */
  function signedForm(name: string, fields: Record<string, string>, opts: { query?: string; url?: string; token?: string } = {}) {
    const tail = `/hooks/${name}${opts.query ? `?${opts.query}` : ''}`;
    const url = opts.url ?? `${PUBLIC}${tail}`;
    const signature = twilio.getExpectedTwilioSignature(opts.token ?? AUTH_TOKEN, url, fields);
    return { target: `${gw.hooks}/${name}${opts.query ? `?${opts.query}` : ''}`, url, signature, body: form(fields) };
  }

  it('accepts Twilio\'s published example (a URL with a query), signed by the library and valid to it', async () => {
    const s = signedForm('twilio', CALL, { query: 'foo=1&bar=2' });
    expect(s.url).to.equal('https://hooks.example.com/hooks/twilio?foo=1&bar=2');
    expect(twilio.validateRequest(AUTH_TOKEN, s.signature, s.url, CALL)).to.equal(true);
    const r = await call(s.target, { token: null, raw: s.body, headers: formHeaders(s.signature) });
    expect(r.status, r.text).to.equal(202);
    expect(r.data).to.include({ ok: true, action: 'agent' });
  });

  it('accepts an SMS (non-ASCII text, every field sorted) and renders its fields', async () => {
    const s = signedForm('twilio', SMS);
    expect(twilio.validateRequest(AUTH_TOKEN, s.signature, s.url, SMS)).to.equal(true);
    const r = await call(s.target, { token: null, raw: s.body, headers: formHeaders(s.signature) });
    expect(r.status, r.text).to.equal(202);
    const run = await call(`${gw.hooks}/runs/${r.data.runId}`, { token: ADMIN_TOKEN });
    expect(run.data.run.runId).to.equal(r.data.runId);
  });

  it('accepts the URL signed with the default port written out, as the library does', async () => {
    const s = signedForm('twilio', SMS, { url: 'https://hooks.example.com:443/hooks/twilio' });
    expect(twilio.validateRequest(AUTH_TOKEN, s.signature, `${PUBLIC}/hooks/twilio`, SMS)).to.equal(true);
    const r = await call(s.target, { token: null, raw: s.body, headers: formHeaders(s.signature) });
    expect(r.status, r.text).to.equal(202);
  });

  it('refuses a tampered field, a wrong auth token, another URL and a missing signature with 401 invalid_signature, acting on nothing', async () => {
    const before = await runCount();
    const good = signedForm('twilio', SMS);
    const tampered = form({ ...SMS, Body: 'Wire the money' });
    const wrongKey = signedForm('twilio', SMS, { token: 'not-the-auth-token' });
    const otherUrl = signedForm('twilio', SMS, { url: 'https://elsewhere.example.com/hooks/twilio' });
    expect(twilio.validateRequest(AUTH_TOKEN, good.signature, good.url, Object.fromEntries(new URLSearchParams(tampered)))).to.equal(false);
    for (const [body, headers] of [
      [tampered, formHeaders(good.signature)],
      [good.body, formHeaders(wrongKey.signature)],
      [good.body, formHeaders(otherUrl.signature)],
      [good.body, { 'content-type': 'application/x-www-form-urlencoded' }],
    ] as const) {
      const r = await call(good.target, { token: null, raw: body, headers });
      expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
      expect(r.text).to.not.include(good.signature);
    }
    // An extra field Twilio did not sign is a tampered body too.
    const r = await call(good.target, { token: null, raw: `${good.body}&Extra=1`, headers: formHeaders(good.signature) });
    expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    expect(await runCount()).to.equal(before);
  });

  it('verify.url names the URL Twilio was given when a proxy changes the path; the path the request arrived on is not it', async () => {
    const s = signedForm('twilio-proxied', SMS, { url: 'https://proxy.example.org/sms' });
    const ok = await call(s.target, { token: null, raw: s.body, headers: formHeaders(s.signature) });
    expect(ok.status, ok.text).to.equal(202);
    const asArrived = signedForm('twilio-proxied', SMS);
    const r = await call(asArrived.target, { token: null, raw: asArrived.body, headers: formHeaders(asArrived.signature) });
    expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
  });

  it('with auth: token, the ?token= of the URL is part of what Twilio signs; any of verify.secrets verifies', async () => {
    const s = signedForm('twilio-token', SMS, { query: `token=${TOKEN}` });
    const r = await call(s.target, { token: null, raw: s.body, headers: formHeaders(s.signature) });
    expect(r.status, r.text).to.equal(202);
    // The same request without its token: the signature no longer covers the URL, and no token was sent.
    const bare = signedForm('twilio-token', SMS);
    const refused = await call(bare.target, { token: null, raw: bare.body, headers: formHeaders(bare.signature) });
    expect([refused.status, refused.data.error.code]).to.deep.equal([401, 'unauthorized']);
  });

  describe('a JSON body, signed through the URL\'s bodySHA256', () => {
    const body = JSON.stringify({ property: 'value', boolean: true });
    const signed = (text: string, opts: { hashOf?: string; token?: string } = {}) => {
      const query = `bodySHA256=${twilio.getExpectedBodyHash(opts.hashOf ?? text)}`;
      const url = `${PUBLIC}/hooks/twilio-json?${query}`;
      return { target: `${gw.hooks}/twilio-json?${query}`, url, signature: twilio.getExpectedTwilioSignature(opts.token ?? AUTH_TOKEN, url, {}) };
    };

    it('accepts it when the library accepts it', async () => {
      const s = signed(body);
      expect(twilio.validateRequestWithBody(AUTH_TOKEN, s.signature, s.url, body)).to.equal(true);
      const r = await call(s.target, { token: null, raw: body, headers: { 'content-type': 'application/json', 'x-twilio-signature': s.signature } });
      expect(r.status, r.text).to.equal(202);
    });

    it('refuses a body whose SHA-256 is not the signed bodySHA256, a wrong key, and a JSON body without bodySHA256', async () => {
      const s = signed(body);
      const tampered = body.replace('value', 'other');
      expect(twilio.validateRequestWithBody(AUTH_TOKEN, s.signature, s.url, tampered)).to.equal(false);
      const wrong = signed(body, { token: 'not-the-auth-token' });
      for (const [target, text, signature] of [[s.target, tampered, s.signature], [wrong.target, body, wrong.signature]]) {
        const r = await call(target!, { token: null, raw: text, headers: { 'content-type': 'application/json', 'x-twilio-signature': signature! } });
        expect([r.status, r.data.error.code], r.text).to.deep.equal([401, 'invalid_signature']);
      }
      // Signed over the bare URL, the JSON body would be covered by nothing.
      const bare = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC}/hooks/twilio-json`, {});
      const r = await call(`${gw.hooks}/twilio-json`, { token: null, raw: body, headers: { 'content-type': 'application/json', 'x-twilio-signature': bare } });
      expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
    });
  });
});

describe('config: scheme twilio needs the public URL', () => {
  it('refuses a query in server.publicUrl or verify.url: the query a request arrives with is what is appended', () => {
    const config = { server: { publicUrl: 'https://hooks.example.com?x=1' }, hooks: { token: TOKEN, mappings: [{ id: 't', match: { path: 'twilio' }, messageTemplate: 'x', verify: { scheme: 'twilio', secret: AUTH_TOKEN, url: `https://proxy.example.org/sms?token=${TOKEN}` } }] } };
    try {
      configFromObject(config, '/srv/hookrelay.yaml', {});
      expect.fail('loaded');
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      const problems = (e as ConfigError).problems;
      expect(problems.map((p) => p.path)).to.include.members(['server.publicUrl', 'hooks.mappings[0].verify.url']);
      for (const p of problems) expect(p.message).to.include('leave the query out').and.not.include(TOKEN);
    }
  });


  it('is a config error without server.publicUrl or verify.url, naming both', () => {
    const load = () => configFromObject({ hooks: { token: TOKEN, mappings: [{ id: 't', match: { path: 'twilio' }, messageTemplate: 'x', verify: { scheme: 'twilio', secret: AUTH_TOKEN } }] } }, '/srv/hookrelay.yaml', {});
    expect(load).to.throw(ConfigError);
    try {
      load();
    } catch (e) {
      const problem = (e as ConfigError).problems.find((p) => p.path === 'hooks.mappings[0].verify.url');
      expect(problem, JSON.stringify((e as ConfigError).problems)).to.not.equal(undefined);
      expect(problem!.message).to.include('server.publicUrl');
    }
  });
});
