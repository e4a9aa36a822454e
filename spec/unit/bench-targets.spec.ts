import { expect } from 'chai';
import { RATIO_MAX_STEAL_PCT, targetRows, type Judged } from '../bench/targets.js';

/** The bench's target table (spec/bench/targets.ts): what it calls met. */
describe('bench targets: a ratio is met only on a run the hypervisor left alone', () => {
  const scenario = (durableRps: number, stealPct: number): Judged => ({
    accepted: true, durable: { rps: durableRps, cpu: 1.5 }, bare: { rps: 0.5, cpu: 2 }, p99: 20, stealPct, rssMiB: 160, idleRssMiB: 90,
  });
  const verdict = (rows: [string, string, string][], label: string) => rows.find(([target]) => target.startsWith(label))![2];

  it('a pass under steal is n/a, a pass without it ✓, a miss ✗ either way', () => {
    const rows = targetRows({
      handlebars: scenario(0.77, 39.5),
      jsonata: scenario(0.55, 4),
      agent: scenario(0.5, 39.5),
      transform: scenario(0.4, 1),
    }, {});
    expect(verdict(rows, 'mapped Handlebars')).to.equal('n/a (steal 39.5 %)');
    expect(verdict(rows, 'mapped JSONata')).to.equal('✓');
    expect(verdict(rows, '`/agent`')).to.equal('✗');
    expect(verdict(rows, 'mapped TS transform')).to.equal('✗');
    expect(verdict(rows, 'mapped JSONata')).to.equal(targetRows({ jsonata: scenario(0.55, RATIO_MAX_STEAL_PCT - 0.1) }, {}).find(([t]) => t.startsWith('mapped JSONata'))![2]);
  });
});
