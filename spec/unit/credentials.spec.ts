import { expect } from 'chai';
import type { MappingConfig } from '../../src/config/types.js';
import { credentialHeaders, isCredentialName, keptHead, KEPT_HEAD_BYTES, KEPT_HEADERS_MAX, shownHeaderValue, withoutCredentialParams, withoutCredentials } from '../../src/credentials.js';
import { requestHeaders } from '../../src/engine/context.js';

const mappings = [{ id: 'shop', match: { path: 'shop' }, verify: { scheme: 'hmac', secret: 's', header: 'X-Shopify-Hmac-Sha256' } }] as unknown as MappingConfig[];

/** CONTRACT.md §8: one rule of what is a credential, by name, for headers and query parameters alike. */
describe('credentials: the rule', () => {
  const CREDENTIALS = ['authorization', 'Proxy-Authorization', 'cookie', 'x-hookrelay-token', 'x-openclaw-token', 'x-hookrelay-replay', 'X-Api-Key', 'Api-Key', 'apikey',
    'X-Auth-Token', 'X-Gitlab-Token', 'X-Amz-Security-Token', 'X-Foo-Secret', 'X-Session-Id', 'X-Password', 'x-hub-signature-256', 'stripe-signature', 'X-Shopify-Hmac-Sha256',
    'token', 'access_token', 'api_key', 'client_secret', 'password'];
  const HARMLESS = ['user-agent', 'content-type', 'x-github-event', 'x-github-delivery', 'idempotency-key', 'webhook-id', 'x-slack-request-timestamp', 'referer', 'x', 'page', 'key'];

  it('names a credential by its name, in any case', () => {
    for (const name of CREDENTIALS) expect(isCredentialName(name), name).to.equal(true);
    for (const name of HARMLESS) expect(isCredentialName(name), name).to.equal(false);
  });

  it('drops credential parameters from a query however their names are escaped, keeping the rest in order', () => {
    expect(withoutCredentialParams('')).to.equal('');
    expect(withoutCredentialParams('a=1&token=t&Access_Token=u&api%5Fkey=v&to%6Ben=w&&b=2')).to.equal('a=1&b=2');
  });

  it('cuts credential parameters (and the fragment) from a header that repeats the URL, and leaves other headers as they are', () => {
    expect(shownHeaderValue('referer', 'https://p.example/hooks/x?token=t&x=1&client_secret=s#access_token=f')).to.equal('https://p.example/hooks/x?x=1');
    for (const h of ['x-forwarded-uri', 'x-original-url', 'x-rewrite-url']) expect(shownHeaderValue(h, '/hooks/x?token=t'), h).to.equal('/hooks/x');
    expect(shownHeaderValue('x-custom', '/hooks/x?token=t')).to.equal('/hooks/x?token=t');
  });

  it('is what templates, the request log and fixtures all apply', () => {
    const given = { 'x-api-key': 'k', 'x-gitlab-token': 'g', referer: '/h?token=t&x=1', 'x-github-event': 'push' };
    const seen = requestHeaders(given);
    expect(seen).to.deep.equal({ headers: { referer: '/h?x=1', 'x-github-event': 'push' }, withheld: { 'x-api-key': 'k', 'x-gitlab-token': 'g' } });
    expect(keptHead(given, 'api_key=k&x=1', credentialHeaders([]))).to.deep.equal({ headers: seen.headers, query: 'x=1' });
    expect(withoutCredentials({ headers: given, query: { apikey: 'k', x: '1' } }, [])).to.deep.equal({ headers: seen.headers, query: { x: '1' } });
  });
});

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
