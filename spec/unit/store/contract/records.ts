import { expect } from 'chai';
import { storesFor, type Harness, type TestStore } from './harness.js';
import type { NewEvent, NewRun } from '../../../../src/store/records.js';
import { expectCode } from '../fixtures.js';

const ev = (id: string, extra: Partial<NewEvent> = {}): NewEvent => ({
  id, kind: 'wake', text: `text ${id}`, source: 'wake', at: '2025-01-01T00:00:00.000Z', unsafe: false, ...extra,
});
const run = (runId: string, sessionKey = `hook:${runId}`, extra: Partial<NewRun> = {}): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z', ...extra,
});

/** records and lifecycle */
export function recordsContract(h: Harness): void {
  describe('records and lifecycle', function () {
    this.timeout(30000);
    let store: TestStore;
    const open = storesFor(h);
    beforeEach(async () => {
      store = await open();
    });

    it('round-trips events: seq assigned in order, after/limit honoured, booleans restored', async () => {
      await store.accept([ev('e1'), ev('e2', { kind: 'summary', source: 'run:r1', unsafe: true })], []);
      await store.accept([ev('e3')], []);
      const all = await store.listEvents(0, 10);
      expect(all.map((e) => e.id)).to.deep.equal(['e1', 'e2', 'e3']);
      expect(all[1]).to.deep.equal({ ...ev('e2', { kind: 'summary', source: 'run:r1', unsafe: true }), seq: all[1]!.seq });
      expect(all[0]!.seq).to.be.below(all[1]!.seq).and.below(all[2]!.seq);
      expect((await store.listEvents(all[0]!.seq, 1)).map((e) => e.id)).to.deep.equal(['e2']);
      expect(await store.listEvents(all[2]!.seq, 10)).to.deep.equal([]);
      expect(await store.listEvents(0, 0)).to.deep.equal([]);
    });

    it('round-trips runs: optional fields kept when set and omitted when absent', async () => {
      const full = run('r1', 'hook:a', {
        name: 'GitHub', model: 'fast', thinking: 'low', timeoutSeconds: 90, deliver: true, provider: 'telegram',
        to: '123', unsafe: true, source: 'mapping:github', wakeMode: 'next-heartbeat',
      });
      await store.accept([], [full, run('r2')]);
      expect(await store.getRun('r1')).to.deep.equal({ ...full, status: 'queued' });
      const bare = await store.getRun('r2');
      expect(bare).to.deep.equal({ ...run('r2'), status: 'queued' });
      expect(Object.keys(bare!)).to.not.include.members(['name', 'model', 'to', 'startedAt', 'reply', 'error']);
      expect(await store.getRun('nope')).to.equal(undefined);
    });

    it('lists runs newest first, filtered by status, limited', async () => {
      await store.accept([], [run('r1'), run('r2'), run('r3')]);
      await store.claimRuns(1, '2025-01-01T00:00:01.000Z'); // r1 → running
      expect((await store.listRuns({ limit: 10 })).map((r) => r.runId)).to.deep.equal(['r3', 'r2', 'r1']);
      expect((await store.listRuns({ limit: 2 })).map((r) => r.runId)).to.deep.equal(['r3', 'r2']);
      expect((await store.listRuns({ limit: 10, status: 'queued' })).map((r) => r.runId)).to.deep.equal(['r3', 'r2']);
      expect((await store.listRuns({ limit: 10, status: 'running' })).map((r) => r.runId)).to.deep.equal(['r1']);
    });

    it('counts runs per status, every status present (the metrics gauge)', async () => {
      expect(await store.countRuns()).to.deep.equal({ queued: 0, running: 0, succeeded: 0, failed: 0, timed_out: 0 });
      await store.accept([], [run('r1'), run('r2', 'hook:b'), run('r3', 'hook:c')]);
      await store.claimRuns(2, '2025-01-01T00:00:01.000Z');
      await store.finishRun('r1', { status: 'failed', endedAt: '2025-01-01T00:00:02.000Z', error: 'x' }, {});
      expect(await store.countRuns()).to.deep.equal({ queued: 1, running: 1, succeeded: 0, failed: 1, timed_out: 0 });
    });

    it('finishes a running run with its summary event and conversation turns in one commit', async () => {
      await store.accept([], [run('r1', 'hook:s')]);
      const [claimed] = await store.claimRuns(5, '2025-01-01T00:00:01.000Z');
      expect(claimed).to.include({ runId: 'r1', status: 'running', startedAt: '2025-01-01T00:00:01.000Z' });
      await store.finishRun(
        'r1',
        { status: 'succeeded', endedAt: '2025-01-01T00:00:02.000Z', reply: 'done', deliveredTo: 'telegram:1' },
        { summary: ev('s1', { kind: 'summary', source: 'run:r1' }), history: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] },
      );
      expect(await store.getRun('r1')).to.deep.include({
        status: 'succeeded', endedAt: '2025-01-01T00:00:02.000Z', reply: 'done', deliveredTo: 'telegram:1',
      });
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['s1']);
      expect(await store.history('hook:s', 10)).to.deep.equal([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }]);
    });

    it('refuses to finish a run that is not running (queued, unknown, already ended) and commits nothing', async () => {
      await store.accept([], [run('r1')]);
      const end = { status: 'failed', endedAt: 'x', error: 'boom' } as const;
      const summary = { summary: ev('s1', { kind: 'summary' }) };
      await expectCode(store.finishRun('r1', end, summary), 'run_not_running');
      await expectCode(store.finishRun('nope', end, summary), 'run_not_running');
      await store.claimRuns(1, 't');
      await store.finishRun('r1', end, {});
      await expectCode(store.finishRun('r1', { ...end, status: 'succeeded' }, summary), 'run_not_running');
      expect(await store.getRun('r1')).to.deep.include({ status: 'failed', error: 'boom' });
      expect(await store.listEvents(0, 10)).to.deep.equal([]);
    });

    it('rolls back the whole finishRun when its summary cannot be written', async () => {
      await store.accept([ev('e1')], [run('r1', 'hook:s')]);
      await store.claimRuns(1, 't');
      await expectCode(
        // A kind the events table refuses (its CHECK).
        store.finishRun('r1', { status: 'succeeded', endedAt: 'x' }, { summary: ev('s1', { kind: 'bogus' as 'summary' }), history: [{ role: 'user', content: 'q' }] }),
        'constraint',
      );
      expect((await store.getRun('r1'))!.status).to.equal('running');
      expect(await store.history('hook:s', 10)).to.deep.equal([]);
    });

    it('requeues running runs (clearing startedAt) and ignores the others', async () => {
      await store.accept([], [run('r1'), run('r2')]);
      await store.claimRuns(1, 't');
      await store.requeueRuns(['r1', 'r2', 'nope']);
      const r1 = await store.getRun('r1');
      expect(r1!.status).to.equal('queued');
      expect(r1).to.not.have.property('startedAt');
      expect((await store.listRuns({ limit: 10, status: 'queued' })).length).to.equal(2);
    });

    it('keeps conversations: the last N messages oldest first, state set in the same call', async () => {
      const msgs = Array.from({ length: 5 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }) as const);
      await store.appendHistory('hook:a', msgs.slice(0, 3), { cursor: '7', last: 'telegram:1' });
      await store.appendHistory('hook:a', msgs.slice(3), { cursor: '9' });
      await store.appendHistory('hook:b', [{ role: 'user', content: 'other' }]);
      expect((await store.history('hook:a', 3)).map((m) => m.content)).to.deep.equal(['m2', 'm3', 'm4']);
      expect(await store.history('hook:a', 10)).to.deep.equal(msgs);
      expect(await store.history('hook:none', 10)).to.deep.equal([]);
      expect(await store.getState('cursor')).to.equal('9');
      expect(await store.getState('last')).to.equal('telegram:1');
      expect(await store.getState('missing')).to.equal(undefined);
    });

    it('close() flushes queued writes; later calls reject; close is idempotent; reopen sees everything', async () => {
      const pending = store.accept([ev('e1')], [run('r1')]); // not awaited: still queued
      const appended = store.appendHistory('hook:x', [{ role: 'user', content: 'hi' }], { k: 'v' });
      const closing = store.close();
      await Promise.all([pending, appended, closing, store.close()]);
      await expectCode(store.accept([ev('e2')], []), 'closed');
      await expectCode(store.listEvents(0, 10), 'closed');
      store = await open();
      expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['e1']);
      expect((await store.getRun('r1'))!.status).to.equal('queued');
      expect(await store.history('hook:x', 5)).to.deep.equal([{ role: 'user', content: 'hi' }]);
      expect(await store.getState('k')).to.equal('v');
    });

    it('leaves a crash-interrupted run findable as running at the next open (for recovery)', async () => {
      await store.accept([], [run('r1')]);
      await store.claimRuns(1, 't');
      await store.close();
      store = await open();
      expect((await store.listRuns({ limit: 100, status: 'running' })).map((r) => r.runId)).to.deep.equal(['r1']);
    });
  });
}
