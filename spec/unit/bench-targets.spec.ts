import { expect } from 'chai';
import { RATIO_MAX_STEAL_PCT, targetRows, type Judged } from '../bench/targets.js';

/** The bench's target table (spec/bench/targets.ts): what it calls met. */
describe('bench targets', () => {
  const path = (observedRps: number, stealPct: number, fixed?: Partial<NonNullable<Judged['fixed']>>): Judged => ({
    accepted: true, observed: { rps: observedRps, cpu: 1.5 }, durable: { rps: 0.6, cpu: 1.8 }, bare: { rps: 0.5, cpu: 2 }, stealPct, rssMiB: 160, idleRssMiB: 90,
    ...(fixed ? { fixed: { rate: 2000, p99: 12, durableP99: 10, ratio: 1.2, stealPct, ...fixed } } : {}),
  });
  const row = (rows: [string, string, string][], label: string) => rows.find(([target]) => target.startsWith(label))!;
  const verdict = (rows: [string, string, string][], label: string) => row(rows, label)[2];

  it('accept paths are judged against the observed baseline; a pass under steal is n/a, a miss ✗ either way', () => {
    const rows = targetRows({
      handlebars: path(0.85, 39.5),
      jsonata: path(0.75, 4),
      agent: path(0.5, 39.5),
      transform: path(0.65, 1),
    }, {});
    expect(verdict(rows, 'mapped Handlebars')).to.equal('n/a (steal 39.5 %)');
    expect(verdict(rows, 'mapped JSONata')).to.equal('✓');
    expect(verdict(rows, '`/agent`')).to.equal('✗');
    expect(verdict(rows, 'mapped TS transform')).to.equal('✗');
    expect(verdict(targetRows({ jsonata: path(0.75, RATIO_MAX_STEAL_PCT - 0.1) }, {}), 'mapped JSONata')).to.equal('✓');
  });

  it('the fixed-rate p99 fails on the worst accepted path, and is not judged at another rate', () => {
    const rows = targetRows({ wake: path(1.1, 1, { ratio: 1.2 }), agent: path(1, 1, { ratio: 3.4, p99: 34, durableP99: 10 }) }, { rate: 2000 });
    expect(row(rows, 'p99 at 2,000 req/s')).to.deep.equal([row(rows, 'p99')[0], 'worst agent 34 ms against 10 (3.40×); over: agent 3.40×', '✗']);
    expect(verdict(targetRows({ wake: path(1.1, 1, { ratio: 1.1 }) }, {}), 'p99')).to.equal('✓');
    expect(verdict(targetRows({ wake: path(1.1, 1, { ratio: 1.1, rate: 1000 }) }, {}), 'p99')).to.equal('n/a (--rate 1000)');
  });

  it('a part that did not run says so, and a store scenario on a smaller seed is shown but not judged', () => {
    const rows = targetRows({}, {
      reads: { rate: 1000, scale: 0.01, emptyP99: 10, seededP99: 11, p99: 1.1 },
      retention: { rate: 2000, scale: 1, cpu: 1.1, beforeCpuUs: 100, duringCpuUs: 110, seconds: 30, fileBefore: 300 << 20, fileAfter: 301 << 20 },
    });
    expect(row(rows, '`/wake` accept').slice(1)).to.deep.equal(['not measured in this run', '']);
    expect(row(rows, 'store growth').slice(1)).to.deep.equal(['not measured in this run', '']);
    expect(verdict(rows, '`/wake` p99 at 1,000')).to.equal('n/a (not the target\'s sizes)');
    // Cheap enough, but the file did not shrink.
    expect(verdict(rows, 'a purge of 2 M rows')).to.equal('✗');
  });

  it('ready and store growth are judged against their limits', () => {
    const rows = targetRows({}, { startup: { 100: { medianMs: 900 }, 5000: { medianMs: 2300 } }, store: { bytesPerWake: 148.5, accepted: 10_000 } });
    expect(verdict(rows, 'ready with 100 mappings')).to.equal('✓');
    expect(verdict(rows, 'ready with 5,000 mappings')).to.equal('✗');
    expect(verdict(rows, 'store growth')).to.equal('✓');
  });
});
