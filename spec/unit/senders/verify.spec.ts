import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { sign as githubSign } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import type { VerifyConfig } from '../../../src/config/types.js';
import { sender } from '../../../src/senders/index.js';
import { compileVerifier } from '../../../src/senders/verify.js';

/** A mapping's verifier on a POST with these headers and body (`now` in seconds). */
const compile = (v: VerifyConfig) => (headers: Record<string, string>, body: Buffer, now: number) =>
  compileVerifier(sender(v.scheme), v)({ method: 'POST', headers, body, now });

/**
 * The signature schemes against vectors made by the senders' own libraries (GitHub's
 * @octokit/webhooks-methods, Stripe's SDK, the standardwebhooks package), Slack's documented
 * example, and node:crypto for the generic hmac scheme.
 */
const NOW = 1_790_000_000; // seconds
const body = Buffer.from(JSON.stringify({ action: 'opened', number: 7, title: 'Grüße ✓' }));
const tampered = Buffer.from(body.toString().replace('7', '8'));

function verdict(v: VerifyConfig, headers: Record<string, string>, b: Buffer = body, now = NOW) {
  return compile(v)(headers, b, now)?.code ?? 'ok';
}

describe('senders/verify: github (X-Hub-Signature-256)', () => {
  const v: VerifyConfig = { scheme: 'github', secret: 'It\'s a Secret to Everybody' };
  let header: string;
  before(async () => { header = await githubSign(v.secret!, body.toString()); });

  it('verifies a signature made by @octokit/webhooks-methods', () => {
    expect(verdict(v, { 'x-hub-signature-256': header })).to.equal('ok');
  });
  it('refuses a tampered body, a wrong secret, a missing and a malformed header', () => {
    expect(verdict(v, { 'x-hub-signature-256': header }, tampered)).to.equal('invalid_signature');
    expect(verdict({ ...v, secret: 'other' }, { 'x-hub-signature-256': header })).to.equal('invalid_signature');
    expect(verdict(v, {})).to.equal('invalid_signature');
    for (const bad of [header.slice(7), `sha1=${header.slice(7)}`, header.slice(0, -2), `${header}00`, `${header.slice(0, -1)}g`]) {
      expect(verdict(v, { 'x-hub-signature-256': bad }), bad).to.equal('invalid_signature');
    }
  });
  it('takes any of the rotated secrets: old and new both verify', async () => {
    const rotated: VerifyConfig = { scheme: 'github', secrets: ['new-secret', v.secret!] };
    expect(verdict(rotated, { 'x-hub-signature-256': header })).to.equal('ok');
    expect(verdict(rotated, { 'x-hub-signature-256': await githubSign('new-secret', body.toString()) })).to.equal('ok');
    expect(verdict(rotated, { 'x-hub-signature-256': await githubSign('retired', body.toString()) })).to.equal('invalid_signature');
  });
  it('says what is wrong without echoing the signature or the secret', () => {
    const f = compile(v)({ 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, body, NOW)!;
    expect(f.message).to.include('X-Hub-Signature-256').and.not.include('0'.repeat(64)).and.not.include(v.secret!);
    expect(compile(v)({}, body, NOW)!.message).to.match(/missing/);
    expect(compile(v)({ 'x-hub-signature-256': 'sha256=zz' }, body, NOW)!.message).to.match(/not of the form sha256=<64 hex digits>/);
  });
});

describe('senders/verify: stripe (Stripe-Signature)', () => {
  const stripe = new Stripe('sk_test_spec');
  const secret = 'whsec_stripe_spec_secret';
  const v: VerifyConfig = { scheme: 'stripe', secret };
  const header = (o: { timestamp?: number; secret?: string; payload?: Buffer } = {}) =>
    stripe.webhooks.generateTestHeaderString({ payload: (o.payload ?? body).toString(), secret: o.secret ?? secret, timestamp: o.timestamp ?? NOW });

  it('verifies a header made by stripe.webhooks.generateTestHeaderString', () => {
    expect(verdict(v, { 'stripe-signature': header() })).to.equal('ok');
  });
  it('refuses a tampered body, a wrong secret, a missing and a malformed header', () => {
    expect(verdict(v, { 'stripe-signature': header() }, tampered)).to.equal('invalid_signature');
    expect(verdict(v, { 'stripe-signature': header({ secret: 'whsec_other' }) })).to.equal('invalid_signature');
    expect(verdict(v, {})).to.equal('invalid_signature');
    const h = header();
    for (const bad of ['garbage', h.replace(/t=\d+,/, ''), h.replace('v1=', 'v2='), h.replace(/t=\d+/, 't=soon')]) {
      expect(verdict(v, { 'stripe-signature': bad }), bad).to.equal('invalid_signature');
    }
  });
  it('is stale past the tolerance in either direction (300 s by default, or toleranceSeconds)', () => {
    expect(verdict(v, { 'stripe-signature': header({ timestamp: NOW - 300 }) })).to.equal('ok');
    expect(verdict(v, { 'stripe-signature': header({ timestamp: NOW - 301 }) })).to.equal('stale_signature');
    expect(verdict(v, { 'stripe-signature': header({ timestamp: NOW + 301 }) })).to.equal('stale_signature');
    expect(verdict({ ...v, toleranceSeconds: 30 }, { 'stripe-signature': header({ timestamp: NOW - 31 }) })).to.equal('stale_signature');
  });
  it('accepts any of several v1 signatures and ignores v0 (a secret being rolled)', () => {
    const other = header({ secret: 'whsec_old' }).split(',')[1];
    const h = header();
    const [t, v1] = h.split(',');
    expect(verdict(v, { 'stripe-signature': `${t},${other},${v1},v0=${'a'.repeat(40)}` })).to.equal('ok');
    expect(verdict(v, { 'stripe-signature': `${t},v0=${v1.slice(3)}` })).to.equal('invalid_signature');
  });
  it('takes any of the rotated secrets', () => {
    const rotated: VerifyConfig = { scheme: 'stripe', secrets: ['whsec_new', secret] };
    expect(verdict(rotated, { 'stripe-signature': header() })).to.equal('ok');
    expect(verdict(rotated, { 'stripe-signature': header({ secret: 'whsec_new' }) })).to.equal('ok');
  });
});

describe('senders/verify: slack (X-Slack-Signature)', () => {
  // https://api.slack.com/authentication/verifying-requests-from-slack — the documented example.
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const ts = '1531420618';
  const slackBody = Buffer.from('token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c');
  const signature = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
  const v: VerifyConfig = { scheme: 'slack', secret };
  const at = Number(ts);
  const headers = { 'x-slack-signature': signature, 'x-slack-request-timestamp': ts };

  it('verifies Slack\'s documented example', () => {
    expect(verdict(v, headers, slackBody, at + 10)).to.equal('ok');
  });
  it('refuses a tampered body, a wrong secret, a missing and a malformed header', () => {
    expect(verdict(v, headers, Buffer.from(`${slackBody}x`), at)).to.equal('invalid_signature');
    expect(verdict({ scheme: 'slack', secret: 'nope' }, headers, slackBody, at)).to.equal('invalid_signature');
    expect(verdict(v, { 'x-slack-signature': signature }, slackBody, at)).to.equal('invalid_signature');
    expect(verdict(v, { 'x-slack-request-timestamp': ts }, slackBody, at)).to.equal('invalid_signature');
    expect(verdict(v, { ...headers, 'x-slack-signature': signature.slice(3) }, slackBody, at)).to.equal('invalid_signature');
    expect(verdict(v, { ...headers, 'x-slack-request-timestamp': 'yesterday' }, slackBody, at)).to.equal('invalid_signature');
  });
  it('is stale past 300 s, before or after the clock', () => {
    expect(verdict(v, headers, slackBody, at + 300)).to.equal('ok');
    expect(verdict(v, headers, slackBody, at + 301)).to.equal('stale_signature');
    expect(verdict(v, headers, slackBody, at - 301)).to.equal('stale_signature');
  });
  it('takes any of the rotated secrets', () => {
    expect(verdict({ scheme: 'slack', secrets: ['new', secret] }, headers, slackBody, at)).to.equal('ok');
  });
});

describe('senders/verify: standard-webhooks (webhook-signature)', () => {
  const secret = `whsec_${Buffer.from('a standard webhooks signing key').toString('base64')}`;
  const v: VerifyConfig = { scheme: 'standard-webhooks', secret };
  const headers = (o: { at?: number; secret?: string; payload?: Buffer; id?: string } = {}) => {
    const id = o.id ?? 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
    const at = o.at ?? NOW;
    return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': new Webhook(o.secret ?? secret).sign(id, new Date(at * 1000), (o.payload ?? body).toString()) };
  };

  it('verifies a signature made by the standardwebhooks package (also under svix-* names)', () => {
    expect(verdict(v, headers())).to.equal('ok');
    const h = headers();
    expect(verdict(v, { 'svix-id': h['webhook-id'], 'svix-timestamp': h['webhook-timestamp'], 'svix-signature': h['webhook-signature'] })).to.equal('ok');
  });
  it('and the package accepts what it signed: the two agree byte for byte', () => {
    expect(() => new Webhook(secret).verify(body.toString(), headers({ at: Math.floor(Date.now() / 1000) }))).to.not.throw();
  });
  it('refuses a tampered body, a wrong secret, another id, a missing and a malformed header', () => {
    expect(verdict(v, headers(), tampered)).to.equal('invalid_signature');
    expect(verdict(v, headers({ secret: `whsec_${Buffer.from('other key').toString('base64')}` }))).to.equal('invalid_signature');
    expect(verdict(v, { ...headers(), 'webhook-id': 'msg_other' })).to.equal('invalid_signature');
    const { 'webhook-id': _, ...noId } = headers();
    expect(verdict(v, noId)).to.equal('invalid_signature');
    expect(verdict(v, { ...headers(), 'webhook-signature': headers()['webhook-signature'].replace('v1,', 'v1a,') })).to.equal('invalid_signature');
    expect(verdict(v, { ...headers(), 'webhook-signature': 'v1,not base64!' })).to.equal('invalid_signature');
  });
  it('accepts any of several space-separated signatures', () => {
    const mine = headers()['webhook-signature'];
    const other = headers({ secret: `whsec_${Buffer.from('old key').toString('base64')}` })['webhook-signature'];
    expect(verdict(v, { ...headers(), 'webhook-signature': `${other} ${mine}` })).to.equal('ok');
  });
  it('is stale past the tolerance in either direction', () => {
    expect(verdict(v, headers({ at: NOW - 301 }))).to.equal('stale_signature');
    expect(verdict(v, headers({ at: NOW + 301 }))).to.equal('stale_signature');
    expect(verdict({ ...v, toleranceSeconds: 600 }, headers({ at: NOW - 500 }))).to.equal('ok');
  });
  it('takes any of the rotated secrets (with or without the whsec_ prefix)', () => {
    const fresh = Buffer.from('the new key').toString('base64');
    const rotated: VerifyConfig = { scheme: 'standard-webhooks', secrets: [fresh, secret] };
    expect(verdict(rotated, headers())).to.equal('ok');
    expect(verdict(rotated, headers({ secret: `whsec_${fresh}` }))).to.equal('ok');
  });
});

describe('senders/verify: hmac (a header you name)', () => {
  const secret = 'shpss_generic';
  const digest = (alg: string, enc: 'hex' | 'base64', b: Buffer = body, s = secret) => createHmac(alg, s).update(b).digest(enc);

  for (const [algorithm, encoding, prefix] of [['sha256', 'hex', ''], ['sha256', 'base64', ''], ['sha1', 'hex', 'sha1='], ['sha512', 'base64', 'sig=']] as const) {
    describe(`${algorithm}, ${encoding}, prefix "${prefix}"`, () => {
      const v: VerifyConfig = { scheme: 'hmac', secret, header: 'X-Shopify-Hmac-Sha256', algorithm, encoding, prefix };
      const good = `${prefix}${digest(algorithm, encoding)}`;
      it('verifies, and refuses a tampered body, a wrong secret, a missing and a malformed header', () => {
        expect(verdict(v, { 'x-shopify-hmac-sha256': good })).to.equal('ok');
        expect(verdict(v, { 'x-shopify-hmac-sha256': good }, tampered)).to.equal('invalid_signature');
        expect(verdict(v, { 'x-shopify-hmac-sha256': `${prefix}${digest(algorithm, encoding, body, 'wrong')}` })).to.equal('invalid_signature');
        expect(verdict(v, {})).to.equal('invalid_signature');
        expect(verdict(v, { 'x-shopify-hmac-sha256': `x${good}` })).to.equal('invalid_signature');
        expect(verdict(v, { 'x-shopify-hmac-sha256': good.slice(0, -4) })).to.equal('invalid_signature');
      });
    });
  }

  it('defaults to sha256, hex, no prefix; takes upper-case hex and any of the rotated secrets', () => {
    const v: VerifyConfig = { scheme: 'hmac', secrets: ['new', secret], header: 'X-Signature' };
    expect(verdict(v, { 'x-signature': digest('sha256', 'hex').toUpperCase() })).to.equal('ok');
    expect(verdict(v, { 'x-signature': digest('sha256', 'hex', body, 'new') })).to.equal('ok');
    expect(verdict(v, { 'x-signature': digest('sha1', 'hex') })).to.equal('invalid_signature');
  });

  it('checks the bytes as they came, not their text', () => {
    const v: VerifyConfig = { scheme: 'hmac', secret, header: 'X-Signature' };
    const latin1 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]); // {"a":"é"} in Latin-1
    expect(verdict(v, { 'x-signature': digest('sha256', 'hex', latin1) }, latin1)).to.equal('ok');
  });
});

// Postmark sends the Basic auth credentials of its webhook URL (RFC 7617):
// https://postmarkapp.com/developer/webhooks/webhooks-overview#protecting-your-webhook
describe('senders/verify: postmark (Basic auth)', () => {
  const v: VerifyConfig = { scheme: 'postmark', username: 'postmark', password: 'pa:ss wörd' };
  const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

  it('takes the username and password, and refuses another password, another user, a missing and a malformed header', () => {
    expect(verdict(v, { authorization: basic('postmark', 'pa:ss wörd') })).to.equal('ok');
    expect(verdict(v, { authorization: basic('postmark', 'pa:ss wörd').replace('Basic', 'basic') })).to.equal('ok');
    expect(verdict(v, { authorization: basic('postmark', 'pa:ss') })).to.equal('invalid_signature');
    expect(verdict(v, { authorization: basic('other', 'pa:ss wörd') })).to.equal('invalid_signature');
    expect(verdict(v, {})).to.equal('invalid_signature');
    expect(verdict(v, { authorization: 'Bearer abc' })).to.equal('invalid_signature');
  });

  it('says what to change without quoting the credentials', () => {
    const f = compile(v)({ authorization: basic('postmark', 'guess') }, body, NOW)!;
    expect(f.message).to.equal('the Authorization header does not match: the sender must send the mapping\'s verify.username and verify.password');
    expect(f.message).to.not.include('guess');
  });
});

describe('senders/verify: mailgun reads its signature where the listener reads the payload (form-body.ts)', () => {
  const v: VerifyConfig = { scheme: 'mailgun', secret: 'mailgun-signing-key' };
  const token = 'a'.repeat(50);
  const signature = createHmac('sha256', v.secret!).update(`${NOW}${token}`).digest('hex');
  const json = Buffer.from(JSON.stringify({ signature: { timestamp: String(NOW), token, signature }, 'event-data': { event: 'delivered' } }));
  const form = Buffer.from(new URLSearchParams({ timestamp: String(NOW), token, signature, event: 'delivered' }).toString());
  const FORM = 'application/x-www-form-urlencoded';

  it('a form body: its signature fields', () => {
    expect(verdict(v, { 'content-type': FORM }, form)).to.equal('ok');
  });

  it('a JSON object sent with a form type (curl -d), which the listener reads as JSON: its signature object', () => {
    expect(verdict(v, { 'content-type': FORM }, json)).to.equal('ok');
    expect(verdict(v, { 'content-type': 'application/json' }, json)).to.equal('ok');
  });

  it('another key: invalid_signature', () => {
    expect(verdict({ ...v, secret: 'other' }, { 'content-type': FORM }, json)).to.equal('invalid_signature');
  });
});
