import { expect } from 'chai';
import { verify as githubVerify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import type { VerifyConfig } from '../../../src/config/types.js';
import { sender } from '../../../src/senders/index.js';
import { compileVerifier, signatureHeaders as signWith } from '../../../src/senders/verify.js';

/** The headers a `sign: true` fixture with these headers and body gets. */
const signatureHeaders = (v: VerifyConfig, headers: Record<string, string>, body: Buffer, now: number) =>
  signWith(sender(v.scheme), v, { method: 'POST', headers, body, now });

/**
 * The signatures `sign: true` fixtures get (senders/verify.ts signatureHeaders): accepted by the senders' own
 * libraries where there is one (so they are the real thing, not a mirror of our verifier), and
 * by the listener's verifier, for every scheme; refused with a tampered body.
 */
// The current time when each spec runs (not when the file was loaded: the SDKs check the tolerance against their own clock).
let now = 0;
beforeEach(() => (now = Math.floor(Date.now() / 1000)));
const body = Buffer.from(JSON.stringify({ action: 'opened', number: 7, title: 'Grüße ✓' }));
const tampered = Buffer.from(body.toString().replace('7', '8'));
const ours = (v: VerifyConfig, headers: Record<string, string>, b = body) => compileVerifier(sender(v.scheme), v)({ method: 'POST', headers, body: b, now })?.code ?? 'ok';

describe('senders/sign: signatures for fixtures, every scheme', () => {
  it('github: X-Hub-Signature-256 that @octokit/webhooks-methods verifies', async () => {
    const v: VerifyConfig = { scheme: 'github', secret: 'gh-secret' };
    const h = signatureHeaders(v, {}, body, now);
    expect(await githubVerify('gh-secret', body.toString(), h['x-hub-signature-256']!)).to.equal(true);
    expect(ours(v, h)).to.equal('ok');
    expect(ours(v, h, tampered)).to.equal('invalid_signature');
  });

  it('stripe: a Stripe-Signature that the Stripe SDK verifies', () => {
    const v: VerifyConfig = { scheme: 'stripe', secrets: ['whsec_new', 'whsec_old'] };
    const h = signatureHeaders(v, {}, body, now);
    expect(() => new Stripe('sk_test_spec').webhooks.constructEvent(body.toString(), h['stripe-signature']!, 'whsec_new')).to.not.throw();
    expect(ours(v, h)).to.equal('ok');
    expect(ours(v, h, tampered)).to.equal('invalid_signature');
  });

  it('standard-webhooks: webhook-* headers that the standardwebhooks package verifies, keeping a given message id', () => {
    const secret = `whsec_${Buffer.from('a standard webhooks signing key').toString('base64')}`;
    const v: VerifyConfig = { scheme: 'standard-webhooks', secret };
    const h = signatureHeaders(v, { 'svix-id': 'msg_given' }, body, now);
    expect(h['webhook-id']).to.equal('msg_given');
    expect(() => new Webhook(secret).verify(body.toString(), h)).to.not.throw();
    expect(ours(v, h)).to.equal('ok');
    expect(ours(v, signatureHeaders(v, {}, body, now))).to.equal('ok');
  });

  it('slack and hmac (hex and base64, with a prefix): the listener verifies them', () => {
    const slack: VerifyConfig = { scheme: 'slack', secret: 'slack-secret' };
    expect(ours(slack, signatureHeaders(slack, {}, body, now))).to.equal('ok');
    expect(ours(slack, signatureHeaders(slack, {}, body, now), tampered)).to.equal('invalid_signature');
    for (const v of [
      { scheme: 'hmac', secret: 'shop', header: 'X-Shopify-Hmac-Sha256', encoding: 'base64' },
      { scheme: 'hmac', secret: 'k', header: 'X-Sig', algorithm: 'sha512', prefix: 'sha512=' },
      { scheme: 'hmac', secret: 'k', header: 'X-Sig', algorithm: 'sha1' },
    ] as VerifyConfig[]) {
      const h = signatureHeaders(v, {}, body, now);
      expect(Object.keys(h)).to.deep.equal([v.header!.toLowerCase()]);
      expect(ours(v, h), JSON.stringify(v)).to.equal('ok');
      expect(ours(v, h, tampered)).to.equal('invalid_signature');
    }
  });
});
