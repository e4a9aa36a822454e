import { expect } from 'chai';
import { dropPrototypeKeys, isPrototypeKey, withoutPrototypeKeys } from '../../../src/engine/prototype-keys.js';

describe('engine/prototype-keys', () => {
  it('names exactly __proto__, prototype and constructor', () => {
    expect(['__proto__', 'prototype', 'constructor'].every(isPrototypeKey)).to.equal(true);
    expect(isPrototypeKey('proto')).to.equal(false);
    expect(isPrototypeKey(undefined)).to.equal(false);
  });

  it('dropPrototypeKeys deletes own prototype keys at every depth, in place', () => {
    const value = JSON.parse(
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"keep":[{"prototype":2,"ok":3},[{"__proto__":4}]],"deep":{"a":{"constructor":5,"b":6}}}',
    );
    const out = dropPrototypeKeys(value);
    expect(out).to.equal(value);
    expect(JSON.stringify(out)).to.equal('{"keep":[{"ok":3},[{}]],"deep":{"a":{"b":6}}}');
    expect(Object.getPrototypeOf(out)).to.equal(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('dropPrototypeKeys leaves scalars and clean values alone', () => {
    expect(dropPrototypeKeys(null)).to.equal(null);
    expect(dropPrototypeKeys('constructor')).to.equal('constructor');
    expect(dropPrototypeKeys({ a: [1, { b: 2 }] })).to.deep.equal({ a: [1, { b: 2 }] });
  });

  it('dropPrototypeKeys survives nesting deeper than the call stack', () => {
    const depth = 200_000;
    const value = JSON.parse('['.repeat(depth) + '{"__proto__":1}' + ']'.repeat(depth));
    dropPrototypeKeys(value);
    let inner: unknown = value;
    for (let i = 0; i < depth; i++) inner = (inner as unknown[])[0];
    expect(Object.keys(inner as object)).to.deep.equal([]);
  });

  it('withoutPrototypeKeys copies only when needed', () => {
    const clean = { a: 1 };
    expect(withoutPrototypeKeys(clean)).to.equal(clean);
    const dirty = JSON.parse('{"a":1,"__proto__":2,"constructor":3}');
    const copy = withoutPrototypeKeys(dirty);
    expect(copy).to.not.equal(dirty);
    expect(JSON.stringify(copy)).to.equal('{"a":1}');
    expect(withoutPrototypeKeys([1])).to.deep.equal([1]);
  });
});
