import { expect } from 'chai';
import { retryDelayMs } from '../../../src/dispatch/delivery.js';

describe('dispatch/delivery: retry back-off (CONTRACT.md §9)', () => {
  const cap = 300_000;
  const at = (r: number) => ({ maxDelayMs: cap, random: () => r });

  it('the n-th retry waits 2^(n−1) s, no jitter at random 0', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => retryDelayMs(n, undefined, at(0)))).to.deep.equal([1000, 2000, 4000, 8000, 16000, 256000]);
  });

  it('is capped at maxDelay (default 300 s), before the jitter', () => {
    expect(retryDelayMs(10, undefined, at(0))).to.equal(300_000);
    expect(retryDelayMs(30, undefined, at(0))).to.equal(300_000);
    expect(retryDelayMs(4, undefined, { maxDelayMs: 5000, random: () => 0 })).to.equal(5000);
  });

  it('adds 0–20 % jitter from the injected random', () => {
    expect(retryDelayMs(3, undefined, at(0.5))).to.equal(4400);
    expect(retryDelayMs(3, undefined, at(0.999999))).to.equal(4800);
    expect(retryDelayMs(10, undefined, at(0.5))).to.equal(330_000);
    for (let i = 0; i < 200; i++) {
      const d = retryDelayMs(2, undefined, { maxDelayMs: cap });
      expect(d).to.be.within(2000, 2400);
    }
  });

  it('waits out a longer Retry-After in full, even beyond the cap; a shorter one does not shorten the back-off', () => {
    expect(retryDelayMs(1, 7000, at(0))).to.equal(7000);
    expect(retryDelayMs(12, 3_600_000, at(0.5))).to.equal(3_600_000);
    expect(retryDelayMs(4, 1000, at(0))).to.equal(8000);
    expect(retryDelayMs(1, 0, at(0))).to.equal(1000);
  });
});
