import { expect } from 'chai';
import { startMaintenance, UPKEEP_SHARE, type PurgePort } from '../../../src/store/maintenance.js';
import { silentLogger } from '../../support/silent-logger.js';
import { DAY, T0 } from './fixtures.js';

/** Retention at a bounded share of the writer: each upkeep write is followed by a rest in proportion to its time. */
describe('store maintenance: upkeep at a bounded share', () => {
  it(`rests after every write and give-back step so that upkeep takes ${UPKEEP_SHARE * 100} % of the time it runs`, async () => {
    let clock = 0; // a monotonic clock in ms that only the fake writes and rests move
    let busy = 0;
    let rested = 0;
    const rests: number[] = [];
    const writes: string[] = [];
    let left = 3; // pages-steps the give-back still has
    const take = async (ms: number) => {
      clock += ms;
      busy += ms;
    };
    const port: PurgePort = {
      write: async <T>(op: { kind: string }) => {
        writes.push(op.kind);
        await take(op.kind === 'purge' ? 40 : 4);
        if (op.kind === 'purge') {
          const first = writes.filter((k) => k === 'purge').length % 3 !== 0; // each table: two full batches, then the end
          return (first ? { deleted: 500, next: 1 } : { deleted: 10 }) as T;
        }
        return 0 as T;
      },
      guard: (fn) => fn(),
      isOpen: () => true,
      giveBack: async () => {
        writes.push('giveBack');
        await take(20);
        return --left > 0;
      },
    };
    const m = startMaintenance(port, {
      retainDays: 1, idempotencyWindowSeconds: 60, log: silentLogger, clock: () => new Date(T0 + 2 * DAY),
      purgeEveryMs: 3_600_000, keysPurgeEveryMs: 3_600_000,
      pace: { now: () => clock, rest: async (ms) => { rests.push(ms); rested += ms; clock += ms; } },
    });
    try {
      const counts = await m.purgeExpired();
      expect(counts).to.deep.equal({ runs: 1010, history: 1010, events: 1010, outbox: 1010 });
      expect(writes.filter((k) => k === 'giveBack')).to.have.length(3);
      expect(rests).to.have.length(writes.length);
      expect(busy / (busy + rested)).to.be.closeTo(UPKEEP_SHARE, 1e-9);
      expect(Math.max(...rests)).to.equal(40 * (1 / UPKEEP_SHARE - 1)); // a rest follows its own write, not the pass
    } finally {
      m.stop();
    }
  });
});
