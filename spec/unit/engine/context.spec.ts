import { expect } from 'chai';
import type { HookRequest } from '../../../src/engine/compile-mapping.js';
import { requestContext, templateQuery, templateUrl, transformInput } from '../../../src/engine/context.js';

const req = (payload: Record<string, unknown>): HookRequest => ({
  name: 'github',
  payload,
  headers: { 'x-github-event': 'push' },
  query: { a: '1' },
  url: '/hooks/github?a=1',
  now: new Date('2024-05-01T10:00:00Z'),
});
const NOW = '2024-05-01T10:00:00.000Z';

describe('engine/context', () => {
  it('puts payload fields at the top level, next to payload, headers, query, path and now', () => {
    const r = req({ action: 'opened', number: 5 });
    const ctx = requestContext(r, NOW);
    expect(ctx).to.deep.equal({
      action: 'opened',
      number: 5,
      payload: r.payload,
      headers: r.headers,
      query: r.query,
      path: 'github',
      now: NOW,
    });
  });

  it('lets the named keys win; the payload fields stay reachable under payload', () => {
    const ctx = requestContext(req({ path: 'from-payload', now: 'then', headers: 'x' }), NOW);
    expect(ctx.path).to.equal('github');
    expect(ctx.now).to.equal(NOW);
    expect((ctx.payload as Record<string, unknown>).path).to.equal('from-payload');
  });

  it('never copies prototype keys and never changes the context prototype', () => {
    const ctx = requestContext(req(JSON.parse('{"__proto__":{"polluted":true},"constructor":1,"ok":2}')), NOW);
    expect(Object.getPrototypeOf(ctx)).to.equal(Object.prototype);
    expect(Object.hasOwn(ctx, '__proto__')).to.equal(false);
    expect(Object.hasOwn(ctx, 'constructor')).to.equal(false);
    expect(ctx.ok).to.equal(2);
  });

  it('builds item contexts: item fields at the top, plus item, index and payload', () => {
    const r = req({ messages: [] });
    const item = { id: 'm1', index: 'shadowed', subject: 'hi' };
    const ctx = requestContext(r, NOW, item, 3);
    expect(ctx).to.include({ id: 'm1', subject: 'hi', item, index: 3, payload: r.payload, path: 'github', now: NOW });
    expect(requestContext(r, NOW, 'plain', 0)).to.include({ item: 'plain', index: 0 });
  });

  it('gives transforms payload, headers, query, path, url and now (+ item and index under forEach)', () => {
    const r = req({ x: 1 });
    expect(transformInput(r, NOW, undefined, -1)).to.deep.equal({
      payload: r.payload,
      headers: r.headers,
      query: r.query,
      path: 'github',
      url: '/hooks/github?a=1',
      now: NOW,
    });
    expect(transformInput(r, NOW, { id: 1 }, 2)).to.include({ index: 2 }).and.have.deep.property('item', { id: 1 });
  });

  it('gives the url percent-encoded per segment, a plain path as it is, with its token-free query', () => {
    expect(templateUrl('/hooks/github', '')).to.equal('/hooks/github');
    expect(templateUrl("/hooks/a-b_c.d!~*'()", 'x=1')).to.equal("/hooks/a-b_c.d!~*'()?x=1");
    expect(templateUrl('/hooks/git hub/ä?#%', '')).to.equal('/hooks/git%20hub/%C3%A4%3F%23%25');
    expect(templateUrl('/hooks/a&b=c', 'q=1')).to.equal('/hooks/a%26b%3Dc?q=1');
  });

  it('reads the query into fields (a repeated one keeps its last value), an empty query as no fields, never a prototype key', () => {
    expect(templateQuery('')).to.deep.equal({});
    expect(templateQuery('a=1&b=x%20y&a=2')).to.deep.equal({ a: '2', b: 'x y' });
    const q = templateQuery('__proto__=1&constructor=2&ok=3');
    expect(q).to.deep.equal({ ok: '3' });
    expect(Object.getPrototypeOf(q)).to.equal(Object.prototype);
  });
});
