import { expect } from 'chai';
import { median, paired, pairedCpu } from '../bench/stats.js';

/** The bench's statistics over rounds (spec/bench/stats.ts): what `--against` and the ratios report. */
describe('bench: statistics over rounds', () => {
  it('the median of an even count is the mean of the two middle values, not the upper one', () => {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(median([7])).to.equal(7);
  });

  it('a paired ratio is the median of the rounds\' own ratios (each round\'s pair ran back to back)', () => {
    // The machine slowed down in the last two rounds: both servers' figures fell, their ratio did not.
    expect(paired([100, 100, 50, 50], [50, 50, 25, 25])).to.equal(0.5);
    expect(paired([100, 100, 100, 100], [40, 50, 60, 90])).to.equal(0.55);
  });

  it('the paired change of CPU per request over 8 rounds: the median change, and the lowest and highest round', () => {
    const older = [100, 100, 100, 100, 100, 100, 100, 100];
    const newer = [80, 90, 95, 98, 104, 110, 112, 130];
    // The 4th and 5th changes are -2 % and +4 %: +1 %, where the upper one alone said +4 %.
    expect(pairedCpu(older, newer)).to.deep.equal({ median: 0.01, low: -0.2, high: 0.3, rounds: 8 });
  });
});
