import { expect } from 'chai';
import { compileJsonata } from '../../../src/engine/jsonata.js';

const FAST = { timeoutMs: 100, maxDepth: 200 };

describe('engine/jsonata', () => {
  const context = { items: [{ price: 2 }, { price: 3.5 }], user: { name: 'ann' }, flag: true, payload: { items: [] } };

  it('evaluates expressions and renders like Handlebars: text as is, scalars with String, objects as JSON, nothing as empty', async () => {
    expect(await compileJsonata('"Total: " & $sum(items.price)')(context)).to.equal('Total: 5.5');
    expect(await compileJsonata('$sum(items.price)')(context)).to.equal('5.5');
    expect(await compileJsonata('flag')(context)).to.equal('true');
    expect(await compileJsonata('user')(context)).to.equal('{"name":"ann"}');
    expect(await compileJsonata('items.price')(context)).to.equal('[2,3.5]');
    expect(await compileJsonata('missing.path')(context)).to.equal('');
    expect(await compileJsonata('null')(context)).to.equal('');
  });

  it('throws a one-line error with the position on a syntax error', () => {
    expect(() => compileJsonata('items[')).to.throw(/^JSONata syntax error at position \d+: /);
  });

  it('stops infinite tail recursion with the time limit', async () => {
    const started = Date.now();
    const evaluate = compileJsonata('($loop := function($n) { $loop($n + 1) }; $loop(0))', FAST);
    const err = await evaluate(context).then(() => undefined, (e: { code?: string }) => e);
    expect(err?.code).to.equal('D1012');
    expect(Date.now() - started).to.be.below(2000);
  });

  it('stops deep recursion with the depth limit', async () => {
    const evaluate = compileJsonata('($deep := function($n) { 1 + $deep($n + 1) }; $deep(0))', FAST);
    const err = await evaluate(context).then(() => undefined, (e: { code?: string }) => e);
    expect(err?.code).to.equal('D1011');
  });

  it('never resolves __proto__, prototype or constructor by name, own keys included', async () => {
    const payload = JSON.parse('{"__proto__":{"x":"leak"},"constructor":"leak","prototype":"leak","ok":"fine"}');
    const ctx = { ...payload, payload };
    for (const expression of ['__proto__.x', 'payload.__proto__', 'payload.`__proto__`.x', 'constructor', 'payload.prototype', '$lookup(payload, "constructor")', 'user.constructor']) {
      expect(await compileJsonata(expression)({ ...ctx, user: {} }), expression).to.equal('');
    }
    expect(await compileJsonata('payload.ok')(ctx)).to.equal('fine');
    expect(await compileJsonata('$lookup(payload, "ok")')(ctx)).to.equal('fine');
    expect(await compileJsonata('$lookup([{"a": 1}, {"a": [2, 3]}, {}], "a")')(ctx)).to.equal('[1,2,3]');
  });

  it('compiles once and evaluates concurrently without shared state', async () => {
    const evaluate = compileJsonata('user.name');
    const results = await Promise.all(['a', 'b', 'c'].map((name) => evaluate({ user: { name } })));
    expect(results).to.deep.equal(['a', 'b', 'c']);
  });
});
