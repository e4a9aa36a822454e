import { expect } from 'chai';
import type { MappingConfig } from '../../src/config/types.js';
import { credentialHeaders, keptHead, KEPT_HEAD_BYTES, KEPT_HEADERS_MAX } from '../../src/credentials.js';

const mappings = [{ id: 'shop', match: { path: 'shop' }, verify: { scheme: 'hmac', secret: 's', header: 'X-Shopify-Hmac-Sha256' } }] as unknown as MappingConfig[];

/** What the request log keeps of a request's head beside a kept body (CONTRACT.md §11). */
describe('credentials: keptHead', () => {
  it('keeps the headers and query but every credential, signature (a mapping\'s hmac header too) and the connection\'s own headers', () => {
    const dropped = ['authorization', 'proxy-authorization', 'cookie', 'x-hookrelay-token', 'x-openclaw-token', 'x-hookrelay-replay', 'x-hub-signature', 'x-hub-signature-256',
      'stripe-signature', 'x-slack-signature', 'webhook-signature', 'svix-signature', 'x-shopify-hmac-sha256', 'host', 'content-length', 'connection', 'transfer-encoding'];
    const given = Object.fromEntries([...dropped, 'content-type', 'x-github-event'].map((h) => [h, `v-${h}`]));
    const head = keptHead({ ...given, 'x-forwarded-for': ['a', 'b'] }, 'page=2&token=t&to%6Ben=u&x=1', credentialHeaders(mappings));
    expect(head).to.deep.equal({ headers: { 'content-type': 'v-content-type', 'x-github-event': 'v-x-github-event', 'x-forwarded-for': 'a, b' }, query: 'page=2&x=1' });
  });

  it('is bounded: at most 64 headers and 8 KiB of names, values and query; each kept whole or not at all', () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-h${i}`, 'v']));
    expect(Object.keys(keptHead(many, '', credentialHeaders([])).headers)).to.have.length(KEPT_HEADERS_MAX);
    const big = keptHead({ 'x-big': 'b'.repeat(KEPT_HEAD_BYTES), 'x-small': 's' }, `q=${'x'.repeat(KEPT_HEAD_BYTES)}`, credentialHeaders([]));
    expect(big).to.deep.equal({ headers: { 'x-small': 's' } });
    const full = keptHead({ 'x-a': 'a'.repeat(5000), 'x-b': 'b'.repeat(5000) }, 'q=1', credentialHeaders([]));
    expect(full).to.deep.equal({ headers: { 'x-a': 'a'.repeat(5000) }, query: 'q=1' });
  });
});
