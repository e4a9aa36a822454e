import { expect } from 'chai';
import { createAddressCounts } from '../../../src/http/address-counts.js';

describe('http/address-counts', () => {
  it('counts per address within a window, and starts again when it ends', () => {
    const c = createAddressCounts(60_000, 10);
    expect(c.hit('a', 0).count).to.equal(1);
    expect(c.hit('a', 1_000).count).to.equal(2);
    expect(c.hit('b', 1_000).count).to.equal(1);
    expect(c.hit('a', 59_999)).to.deep.equal({ count: 3, resetAt: 60_000 });
    expect(c.hit('a', 60_000)).to.deep.equal({ count: 1, resetAt: 120_000 });
    c.forget('b');
    expect(c.hit('b', 61_000).count).to.equal(1);
  });

  it('peeks at an address\'s count in its current window without counting', () => {
    const c = createAddressCounts(60_000, 10);
    expect(c.peek('a', 0)).to.equal(undefined);
    c.hit('a', 0);
    expect(c.peek('a', 59_999)).to.deep.equal({ count: 1, resetAt: 60_000 });
    expect(c.peek('a', 59_999)).to.deep.equal({ count: 1, resetAt: 60_000 });
    expect(c.peek('a', 60_000)).to.equal(undefined);
  });

  it('a spray of addresses never grows the table past its bound; ended windows go first, then the oldest live one', () => {
    const c = createAddressCounts(60_000, 100);
    for (let i = 0; i < 10_000; i++) c.hit(`10.0.${i >> 8}.${i & 255}`, i);
    expect(c.size).to.equal(100);
    // The newest addresses are the ones still counted.
    expect(c.hit('10.0.39.15', 10_000).count).to.equal(2); // i = 9999
    expect(c.hit('10.0.0.0', 10_000).count).to.equal(1); // i = 0, forgotten long ago
    // Once their windows have ended, a new address sweeps them instead of evicting a live one.
    const d = createAddressCounts(1_000, 3);
    d.hit('old-1', 0);
    d.hit('old-2', 0);
    d.hit('live', 1_500);
    d.hit('new', 1_600);
    expect(d.size).to.equal(2);
    expect(d.hit('live', 1_700).count).to.equal(2);
  });
});
