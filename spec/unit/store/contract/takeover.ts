import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';
import type { NewRun } from '../../../../src/store/records.js';

const run = (runId: string, sessionKey: string): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z',
});
const failed = { status: 'failed', endedAt: '2025-01-01T00:02:00.000Z', error: 'interrupted', errorCode: 'interrupted' } as const;

/** taking over the runs of a store that is gone (runner.recover) */
export function takeOverContract(h: Harness): void {
  describe('taking over the runs of a store that is gone', function () {
    this.timeout(30000);
    const open = storesFor(h);

    it('never hands out the running runs of the live store itself', async () => {
      const store = await open();
      await store.accept([], [run('r1', 'A'), run('r2', 'B')]);
      expect((await store.claimRuns(10, 't')).map((r) => r.runId)).to.deep.equal(['r1', 'r2']);
      expect(await store.takeOver(10)).to.deep.equal({ runs: [], deliveries: 0 });
      expect((await store.listRuns({ limit: 10, status: 'running' })).length).to.equal(2);
    });

    it('hands the running runs of the store before to the next one, each once and still running, to end', async () => {
      let store = await open();
      await store.accept([], [run('r1', 'A'), run('r2', 'B'), run('q1', 'A')]);
      await store.claimRuns(10, 't');
      await store.close(); // (SQLite keeps running runs at close; PostgreSQL: the instance is gone)
      store = await open();
      const { runs: taken } = await store.takeOver(1);
      const { runs: more } = await store.takeOver(10);
      expect([...taken, ...more].map((r) => r.runId).sort()).to.deep.equal(['r1', 'r2']);
      for (const r of [...taken, ...more]) expect(r.status).to.equal('running');
      expect(await store.takeOver(10), 'handed out once').to.deep.equal({ runs: [], deliveries: 0 });
      for (const r of [...taken, ...more]) await store.finishRun(r.runId, failed, {});
      expect((await store.getRun('r1'))!).to.include({ status: 'failed', errorCode: 'interrupted' });
      expect((await store.getRun('q1'))!.status, 'queued runs simply resume').to.equal('queued');
      expect((await store.claimRuns(10, 't2')).map((r) => r.runId)).to.deep.equal(['q1']);
    });
  });
}
