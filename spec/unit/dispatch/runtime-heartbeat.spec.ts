import { expect } from 'chai';
import { silentLogger } from '../../support/silent-logger.js';
import { INTERRUPTED } from '../../../src/dispatch/runner.js';
import { HEARTBEAT_CURSOR_KEY, LAST_RECIPIENT_KEY } from '../../../src/dispatch/main-session.js';
import { openStore } from '../../../src/store/open.js';
import type { Accepted } from '../../../src/action.js';
import { agent, dispatch, FENCE_OPEN, Harness, runIdOf, sleep, SYSTEM, waitFor, wake } from './runtime-harness.js';

describe('dispatch/runtime (real store, fake model and Telegram)', function () {
  this.timeout(15000);
  let h: Harness;
  afterEach(async () => { await h.close(); });

  describe('heartbeat', () => {
    it('coalesces a burst of 20 now-wakes into one model call with all 20 texts, each fenced', async () => {
      h = await new Harness().open({}, [{ reply: 'You have 20 alerts.' }]);
      const rt = await h.runtime();
      await Promise.all(Array.from({ length: 20 }, (_, i) => dispatch(rt, [wake(`alert number ${i}`)])));
      await h.model.waitForRequests(1, 5000);
      await h.tg.waitForMessages(1);
      // No second turn: the next wake's turn below is the second request.
      expect(h.model.requests).to.have.length(1);
      const q = h.model.requests[0]!;
      for (let i = 0; i < 20; i++) expect(q.user).to.include(`alert number ${i}\n</untrusted-content>`);
      expect([...q.user.matchAll(FENCE_OPEN)]).to.have.length(20);
      expect(q.body.messages[0]!.content).to.include(SYSTEM).and.include('HEARTBEAT_OK');
      expect(h.tg.messages.map((m) => m.body)).to.deep.equal([{ chat_id: '123', text: 'You have 20 alerts.' }]);
      expect(await h.store.getState(HEARTBEAT_CURSOR_KEY)).to.equal('20');
      // The exchange is the main session's history, used by the next heartbeat.
      await dispatch(rt, [wake('one more')]);
      const [, q2] = await h.model.waitForRequests(2);
      expect(q2!.body.messages.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'user']);
      expect(q2!.user).to.include('one more').and.not.include('alert number');
    });

    it('an exchange answered only HEARTBEAT_OK stays out of the main session\'s history; one that answered something stays', async () => {
      h = await new Harness().open({}, [{ match: 'quiet one', reply: 'HEARTBEAT_OK' }, { match: 'loud one', reply: 'Disk is full.' }, { reply: 'HEARTBEAT_OK' }]);
      const rt = await h.runtime();
      const turn = async (text: string, n: number) => {
        await dispatch(rt, [wake(text)]);
        await h.model.waitForRequests(n);
        const seq = (await h.store.listEvents(0, 10)).find((e) => e.text === text)!.seq;
        await waitFor(async () => ((await h.store.getState(HEARTBEAT_CURSOR_KEY)) === String(seq) ? true : undefined), 2000, `turn ${n} committed`);
      };
      await turn('quiet one', 1);
      await turn('loud one', 2);
      expect(h.model.requests[1]!.body.messages.map((m) => m.role), 'the acknowledged turn is not sent again').to.deep.equal(['system', 'user']);
      await turn('last one', 3);
      const sent = h.model.requests[2]!.body.messages;
      expect(sent.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'user']);
      expect(sent[1]!.content).to.include('loud one');
      expect(sent[2]!.content).to.equal('Disk is full.');
      expect(JSON.stringify(sent)).to.not.include('quiet one');
      // The acknowledged events stay readable: only the model's history leaves them out.
      expect((await h.store.listEvents(0, 10)).map((e) => e.text)).to.include('quiet one');
    });

    it('a next-heartbeat wake waits; the next heartbeat carries it (summaries unfenced)', async () => {
      h = await new Harness().open({}, [{ reply: 'HEARTBEAT_OK' }]);
      const rt = await h.runtime();
      await dispatch(rt, [wake('quiet event', { mode: 'next-heartbeat' })]);
      const [a] = await dispatch(rt, [agent('job', { name: 'Job' })]); // wakeMode next-heartbeat too
      await h.run(runIdOf(a!), 'succeeded');
      // Not carried yet: the heartbeat below still finds it after the cursor.
      expect(h.model.requests.filter((r) => r.user.includes('quiet event'))).to.have.length(0);
      await dispatch(rt, [wake('loud event', { unsafe: true })]);
      const q = await waitFor(() => h.model.requests.find((r) => r.user.includes('loud event')), 2000, 'heartbeat');
      expect(q.user).to.include('quiet event').and.include('[Job] Agent run');
      expect([...q.user.matchAll(FENCE_OPEN)]).to.have.length(1); // the unsafe wake and the summary are not fenced
      await sleep(300);
      expect(h.tg.calls).to.have.length(0); // HEARTBEAT_OK
    });

    it('a run with wakeMode now triggers a heartbeat with its summary', async () => {
      h = await new Harness().open({}, [{ match: 'System events', reply: 'HEARTBEAT_OK' }, { reply: 'did it' }]);
      const rt = await h.runtime();
      await dispatch(rt, [agent('job', { wakeMode: 'now' })]);
      const q = await waitFor(() => h.model.requests.find((r) => r.user.includes('System events')), 3000, 'heartbeat');
      expect(q.user).to.include('succeeded').and.include('did it');
    });

    it('a heartbeat reply that is delivered makes its target the last recipient', async () => {
      h = await new Harness().open({}, [{ match: 'System events', reply: 'news for you' }]);
      const rt = await h.runtime();
      expect(await h.store.getState(LAST_RECIPIENT_KEY)).to.equal(undefined);
      await dispatch(rt, [wake('something happened')]);
      await waitFor(() => h.store.getState(LAST_RECIPIENT_KEY), 5000, 'the last recipient');
      expect(JSON.parse((await h.store.getState(LAST_RECIPIENT_KEY))!)).to.deep.equal({ provider: 'telegram', to: '123' });
      expect(h.tg.messages.map((m) => m.body.text)).to.deep.equal(['news for you']);
    });

    it('keeps the cursor when the model fails (retries used up), and retries the same events on the next trigger', async () => {
      h = await new Harness().open({}, [{ status: 503, times: 3, headers: { 'retry-after-ms': '1' } }, { reply: 'HEARTBEAT_OK' }]);
      const rt = await h.runtime({ attempts: 3, baseMs: 10, maxMs: 50 });
      await dispatch(rt, [wake('first')]);
      await h.model.waitForRequests(3);
      expect(await h.store.getState(HEARTBEAT_CURSOR_KEY)).to.equal(undefined);
      await dispatch(rt, [wake('second')]);
      const reqs = await h.model.waitForRequests(4);
      expect(reqs[3]!.user).to.include('first').and.include('second');
      await waitFor(async () => (await h.store.getState(HEARTBEAT_CURSOR_KEY)) === '2', 2000, 'cursor');
    });

    it('a heartbeat reply becomes a reply event (delivered or not), never fed back as a queued event; HEARTBEAT_OK does not', async () => {
      h = await new Harness().open({}, [
        { match: 'first wake', reply: 'Your build broke.' },
        { match: 'second wake', reply: 'HEARTBEAT_OK' },
        { match: 'third wake', reply: 'Nobody to tell.' },
      ]);
      const rt = await h.runtime();
      await dispatch(rt, [wake('first wake')]);
      await h.tg.waitForMessages(1);
      const replies = async () => (await h.store.listEvents(0, 100)).filter((e) => e.kind === 'reply');
      const [r1] = await waitFor(async () => ((await replies()).length === 1 ? replies() : undefined), 2000, 'reply event');
      expect(r1).to.include({ kind: 'reply', text: 'Your build broke.', source: 'heartbeat' });
      expect(r1!.seq).to.be.greaterThan(1);
      expect(await h.store.getState(HEARTBEAT_CURSOR_KEY)).to.equal('1'); // committed with the turn, after its cursor

      await dispatch(rt, [wake('second wake')]);
      const [, q2] = await h.model.waitForRequests(2);
      // The reply is in the main session's history (as the assistant's turn), not among the events.
      expect(q2!.user).to.include('second wake').and.not.include('Your build broke.').and.not.include('from heartbeat');
      expect(q2!.body.messages.filter((m) => m.role === 'assistant').map((m) => m.content)).to.deep.equal(['Your build broke.']);
      // A reply event commits with its turn's cursor.
      await waitFor(async () => (await h.store.getState(HEARTBEAT_CURSOR_KEY)) !== '1', 2000, 'the second turn committed');
      expect(await replies()).to.have.length(1); // HEARTBEAT_OK: no event

      h.tg.respond = () => ({ status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } });
      await dispatch(rt, [wake('third wake')]);
      await waitFor(async () => ((await replies()).length === 2 ? true : undefined), 2000, 'second reply event');
      expect((await replies())[1]).to.include({ text: 'Nobody to tell.' });
      // A restart finds only a reply after the cursor: nothing is queued, so no catch-up turn.
      await rt.stop();
      await h.runtime();
      await sleep(500);
      expect(h.model.requests).to.have.length(3);
    });
  });

  describe('recovery and stop', () => {
    it('at start, marks a run left running by a crash failed (summarised) and resumes queued runs', async () => {
      h = await new Harness().open();
      const now = new Date().toISOString();
      const base = { wakeMode: 'now' as const, deliver: false, provider: 'last' as const, source: 'agent', unsafe: false };
      await h.store.accept([], [
        { ...base, runId: 'crashed', sessionKey: 'hook:x', message: 'was running', name: 'Crash', createdAt: new Date(Date.now() - 1000).toISOString() },
        { ...base, runId: 'waiting', sessionKey: 'hook:y', message: 'was queued', createdAt: now },
      ]);
      expect((await h.store.claimRuns(1, now)).map((r) => r.runId)).to.deep.equal(['crashed']);
      // The crash: the next process opens the store (a store never takes over its own live runs).
      await h.store.close();
      h.store = await openStore(h.config, silentLogger);
      await h.runtime();
      const crashed = await h.run('crashed', 'failed');
      expect(crashed.error).to.equal(INTERRUPTED);
      expect(crashed.errorCode).to.equal('interrupted');
      await h.run('waiting', 'succeeded');
      expect(h.model.requests.some((r) => r.user.includes('was running'))).to.equal(false);
      const s = (await h.summaries()).find((e) => e.source === 'run:crashed')!;
      expect(s.text).to.match(/^\[Crash\] /).and.include(INTERRUPTED);
    });

    it('stop() aborts an in-flight model call and requeues the run; the next start resumes it', async () => {
      h = await new Harness().open({}, [{ match: 'long', delayMs: 10000, times: 1 }]);
      const rt = await h.runtime();
      const [a] = await dispatch(rt, [agent('long job')]);
      await h.model.waitForRequests(1);
      const t0 = Date.now();
      await rt.stop();
      expect(Date.now() - t0).to.be.below(1500); // not the 10 s model delay, nor the 3 s grace
      const queued = await h.store.getRun(runIdOf(a!));
      expect(queued).to.include({ status: 'queued' });
      await h.runtime();
      expect(await h.run(runIdOf(a!), 'succeeded')).to.include({ reply: 'ok' });
      expect(await h.summaries()).to.have.length(1);
    });

    it('stop() lets a delivery request in flight finish within the grace', async () => {
      h = await new Harness().open();
      h.tg.respond = () => ({ status: 200, body: { ok: true, result: {} }, delayMs: 500 });
      const rt = await h.runtime();
      const [a] = await dispatch(rt, [agent('deliver me', { deliver: true })]);
      await h.tg.waitForMessages(1);
      await rt.stop();
      expect(await h.store.getRun(runIdOf(a!))).to.include({ status: 'succeeded', deliveredTo: 'telegram:123' });
    });
  });
});

/**
 * The cases that wait on real time (the period, a delivery's back-off), each on its own harness:
 * both started in `before`, so that their waits overlap; each test then awaits its own.
 */
describe('dispatch/runtime heartbeat waits (real store, fake model and Telegram)', function () {
  this.timeout(15000);
  let periodic: Harness;
  let delivering: Harness;
  let run: Accepted;
  before(async () => {
    periodic = await new Harness().open({ heartbeat: { everySeconds: 1 } });
    delivering = await new Harness().open({}, [{ match: 'System events', reply: 'HEARTBEAT_OK' }, { reply: 'did it' }]);
    let n = 0;
    delivering.tg.respond = () => (n++ === 0 ? { status: 502, body: { ok: false, error_code: 502, description: 'Bad Gateway' } } : undefined);
    [run] = await dispatch(await delivering.runtime(), [agent('job', { wakeMode: 'now', deliver: true })]);
    // Last: its first period starts with its runtime.
    await dispatch(await periodic.runtime(), [wake('periodic please', { mode: 'next-heartbeat' })]);
  });
  after(async () => {
    await periodic?.close();
    await delivering?.close();
  });

  it('the periodic heartbeat picks up waiting events', async () => {
    const h = periodic;
    await sleep(300);
    expect(h.model.requests).to.have.length(0);
    const [q] = await h.model.waitForRequests(1, 2500);
    expect(q!.user).to.include('periodic please');
  });

  it('a delivering run with wakeMode now triggers the heartbeat once its delivery has settled, with what happened', async () => {
    const h = delivering;
    const q = await waitFor(() => h.model.requests.find((r) => r.user.includes('System events')), 5000, 'heartbeat');
    expect(q.user).to.include('Delivered to telegram:123');
    expect(h.tg.messages, 'the heartbeat came after the second, accepted attempt').to.have.length(2);
    expect((await h.run(runIdOf(run), 'succeeded')).delivery).to.deep.equal({ status: 'delivered', target: 'telegram:123', attempts: 2 });
  });
});
