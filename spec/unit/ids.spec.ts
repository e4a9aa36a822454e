import { expect } from 'chai';
import { uuidv7 } from '../../src/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('ids: UUIDv7', () => {
  it('has the RFC 9562 layout: version 7, variant 10, the time in the first 48 bits', () => {
    const t = Date.now();
    const id = uuidv7(t);
    expect(id).to.match(V7);
    expect(msOf(id)).to.be.within(t, t + 1);
  });

  it('sorts in the order the ids were made, also many within one millisecond', () => {
    const t = Date.now() + 10_000; // a millisecond no earlier call used
    const ids = Array.from({ length: 10_000 }, () => uuidv7(t)); // more than the 12-bit counter holds
    const sorted = [...ids].sort();
    expect(ids).to.deep.equal(sorted);
    expect(new Set(ids).size).to.equal(ids.length);
    // Past 4096 in one millisecond it borrows the next ones rather than lose the order.
    expect(msOf(ids.at(-1)!)).to.be.within(t + 1, t + 4);
  });

  it('stays ordered when the clock steps back', () => {
    const a = uuidv7(Date.now() + 20_000);
    const b = uuidv7(Date.now());
    expect(b > a).to.equal(true);
  });

  it('is random past the time and counter: 100 k ids, no repeats', () => {
    const ids = new Set(Array.from({ length: 100_000 }, () => uuidv7()));
    expect(ids.size).to.equal(100_000);
  });
});
