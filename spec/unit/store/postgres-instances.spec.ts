import { expect } from 'chai';
import pg from 'pg';
import { silentLogger } from '../../support/silent-logger.js';
import { PostgresStore } from '../../../src/store/postgres.js';
import { LEADER_LOCK } from '../../../src/store/postgres-schema.js';
import type { NewDelivery, NewEvent, NewRun } from '../../../src/store/records.js';
import { expireInstance, freshDatabase, truncateAll } from '../../support/postgres.js';
import { PG_SPEC_OPTIONS } from '../../support/store-options.js';
import { until } from '../../support/gateway.js';

/**
 * Several instances on one database (CONTRACT.md §10), at the store: instance leases (a live
 * instance's runs are never taken over; a gone one's are, once, with its outbox leases) and
 * the heartbeat leadership (one leader, taken over when its connection drops; `now` triggers
 * by NOTIFY on commit). The shared store contract covers claims across two stores.
 */
const run = (runId: string, sessionKey: string): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z',
});
const ev = (id: string, extra: Partial<NewEvent> = {}): NewEvent => ({ id, kind: 'wake', text: id, source: 'wake', at: '2025-01-01T00:00:00.000Z', unsafe: false, ...extra });
const reply: NewDelivery = { kind: 'run', provider: 'telegram', to: '555', parts: ['one', 'two'], createdAt: '2025-01-01T00:00:00.000Z' };
const failed = { status: 'failed', endedAt: '2025-01-01T00:02:00.000Z', error: 'interrupted', errorCode: 'interrupted' } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** store.leaseSeconds in these specs (the config's minimum is 3; the store takes any): renewed every third of it. */
const LEASE = 2;

describe('store/postgres: several instances on one database', function () {
  this.timeout(60000);
  let url: string;
  const opened: PostgresStore[] = [];
  const open = async (opts: { leaseSeconds?: number; leaderRetryMs?: number } = {}) => {
    const s = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 4, log: silentLogger, ...opts });
    opened.push(s);
    return s;
  };
  const sql = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<T>(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  const expire = (s: PostgresStore) => expireInstance(url, s.instanceId);
  /** The lease renewal stops as in a dead process; the store's pool and instance row stay. */
  const stopRenewing = (s: PostgresStore) => (s as unknown as { lease: { stop(): Promise<void> } }).lease.stop();
  /** How long `s`'s lease has left by the database's clock, which decides it, and when it ends. */
  const lease = (s: PostgresStore) => sql<{ left: number; until: string }>(
    'SELECT EXTRACT(EPOCH FROM lease_until - now())::float AS left, lease_until::text AS until FROM instances WHERE id = $1', [s.instanceId]);
  /** Resolves once the database's clock is past the lease `first` read. */
  const firstLeasePassed = (first: { until: string }) =>
    until('the first lease to pass', async () => (await sql<{ past: boolean }>('SELECT now() > $1::timestamptz AS past', [first.until]))[0]!.past, 10_000, 100);

  before(async () => {
    url = await freshDatabase('instances');
  });
  beforeEach(async () => {
    await (await open()).close();
    opened.splice(0);
    await truncateAll(url);
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close().catch(() => {});
  });

  it('each store registers an instance and renews its lease in the background; close removes it', async () => {
    const a = await open({ leaseSeconds: LEASE });
    const [row] = await lease(a);
    expect(row!.left).to.be.within(LEASE - 1, LEASE + 0.5);
    await firstLeasePassed(row!);
    const [later] = await lease(a);
    expect(later!.left, 'renewed (every third of the lease)').to.be.above(LEASE / 3);
    await a.close();
    expect(await sql('SELECT id FROM instances WHERE id = $1', [a.instanceId])).to.deep.equal([]);
  });

  it('a run claimed by A is not taken over by B while A lives; once A\'s lease expires, B takes it over once, with A\'s deliveries', async () => {
    const a = await open({ leaseSeconds: LEASE });
    const b = await open();
    const c = await open();
    const [first] = await lease(a);
    await a.accept([], [run('r1', 'S1'), run('r2', 'S2'), run('d1', 'S3')]);
    expect((await a.claimRuns(10, 't')).map((r) => r.runId)).to.deep.equal(['r1', 'r2', 'd1']);
    await a.finishRun('d1', { status: 'succeeded', endedAt: 't', reply: 'one two' }, { delivery: reply });
    const leased = (await a.claimDeliveries('2025-01-01T00:00:01.000Z', 10, '2099-01-01T00:00:00.000Z')).deliveries;
    expect(leased).to.have.length(1);
    await a.ackPart(leased[0]!.id, 0);

    await firstLeasePassed(first!); // A renews meanwhile
    expect(await b.takeOver(10), 'A is alive').to.deep.equal({ runs: [], deliveries: 0 });
    expect((await b.claimDeliveries('2025-01-01T00:00:02.000Z', 10, '2099-01-01T00:00:00.000Z')).deliveries, 'A holds its lease').to.deep.equal([]);

    // A dies: its renewal stops first, or a renewal landing after expire() would revive it.
    await stopRenewing(a);
    await expire(a);
    const [takenB, takenC] = await Promise.all([b.takeOver(10), c.takeOver(10)]);
    const [fromB, fromC] = [takenB.runs, takenC.runs];
    const all = [...fromB, ...fromC].map((r) => r.runId).sort();
    expect(all, 'each run to one survivor').to.deep.equal(['r1', 'r2']);
    expect(takenB.deliveries + takenC.deliveries, 'A\'s one leased delivery released once').to.equal(1);
    expect(await b.takeOver(10)).to.deep.equal({ runs: [], deliveries: 0 });
    expect(await c.takeOver(10)).to.deep.equal({ runs: [], deliveries: 0 });
    for (const r of fromB) await b.finishRun(r.runId, failed, {});
    for (const r of fromC) await c.finishRun(r.runId, failed, {});
    expect((await b.getRun('r1'))!).to.include({ status: 'failed', errorCode: 'interrupted' });
    expect((await b.getRun('r2'))!).to.include({ status: 'failed', errorCode: 'interrupted' });
    // A's run-not-running: it cannot end them again (its late answer commits nothing).
    let code: string | undefined;
    await a.finishRun('r1', { status: 'succeeded', endedAt: 't' }, {}).catch((e: { code: string }) => (code = e.code));
    expect(code).to.equal('run_not_running');

    // A's leased delivery: released, and a survivor resumes it after the acknowledged part.
    const resumed = (await b.claimDeliveries('2025-01-01T00:00:03.000Z', 10, '2099-01-01T00:00:00.000Z')).deliveries;
    expect(resumed.map((d) => ({ id: d.id, partsSent: d.partsSent, attempts: d.attempts }))).to.deep.equal([{ id: leased[0]!.id, partsSent: 1, attempts: 2 }]);
    expect((await c.claimDeliveries('2025-01-01T00:00:04.000Z', 10, '2099-01-01T00:00:00.000Z')).deliveries, 'now B\'s').to.deep.equal([]);
  });

  it('a store that stops renewing (its process froze or died) loses its runs after store.leaseSeconds, not before', async () => {
    const a = await open({ leaseSeconds: LEASE });
    const b = await open();
    await a.accept([], [run('r1', 'S1')]);
    await a.claimRuns(1, 't');
    await stopRenewing(a);
    // B tries until A's lease has run out: every try made while it still held finds nothing.
    let taken: string[] = [];
    await until('A\'s lease to run out', async () => {
      taken = (await b.takeOver(10)).runs.map((r) => r.runId);
      const left = (await lease(a))[0]!.left;
      if (left > 0) expect(taken, 'within the lease').to.deep.equal([]);
      return left <= 0;
    }, 10_000, 100);
    if (taken.length === 0) taken = (await b.takeOver(10)).runs.map((r) => r.runId);
    expect(taken).to.deep.equal(['r1']);
  });

  it('one heartbeat leader at a time, taken over within a few seconds when its connection drops; NOTIFY on commit reaches it', async () => {
    const log: string[] = [];
    const lead = async (name: string) => {
      const s = await open({ leaderRetryMs: 200 });
      const l = await s.lead({ onLeader: (on) => log.push(`${name}:${on ? 'lead' : 'lost'}`), onTrigger: () => log.push(`${name}:trigger`) });
      return { s, l };
    };
    const a = await lead('A');
    const b = await lead('B');
    expect(log).to.deep.equal(['A:lead']);

    // B commits a `now` wake: the leader hears of it within ~250 ms; a `next` wake and a
    // rolled-back batch wake nobody.
    await b.s.accept([ev('n1')], []);
    const t0 = Date.now();
    await b.s.accept([ev('w1', { wakesNow: true })], []);
    while (!log.includes('A:trigger') && Date.now() - t0 < 2000) await sleep(5);
    expect(Date.now() - t0, 'trigger latency (ms)').to.be.below(250);
    await b.s.accept([ev('w2', { wakesNow: true, kind: 'bogus' as 'wake' })], []).catch(() => {}); // a kind the CHECK refuses: rolled back
    // Notifications arrive in commit order (https://www.postgresql.org/docs/current/sql-notify.html):
    // once the next commit's has come, any the earlier ones sent would have come before it.
    await b.s.accept([ev('w3', { wakesNow: true })], []);
    await until('the trigger of the next commit', () => log.filter((e) => e === 'A:trigger').length >= 2, 2000, 5);
    expect(log, 'one trigger per committed now wake: none for the next wake, none for the rolled-back one').to.deep.equal(['A:lead', 'A:trigger', 'A:trigger']);

    // The leader's connection drops (as when its process dies): B takes over.
    const [holder] = await sql<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND ((classid::bigint << 32) | objid::bigint) = $1",
      [LEADER_LOCK.toString()],
    );
    await sql('SELECT pg_terminate_backend($1)', [holder!.pid]);
    const t1 = Date.now();
    while (!log.includes('B:lead') && Date.now() - t1 < 5000) await sleep(20);
    expect(log.slice(3).sort()).to.deep.equal(['A:lost', 'B:lead']);
    expect(Date.now() - t1).to.be.below(3000);
    await a.s.accept([ev('w2', { wakesNow: true })], []);
    const t2 = Date.now();
    while (!log.includes('B:trigger') && Date.now() - t2 < 2000) await sleep(5);
    expect(log.filter((e) => e.endsWith('trigger'))).to.deep.equal(['A:trigger', 'A:trigger', 'B:trigger']);
    await sleep(500);
    expect(log.filter((e) => e === 'A:lead'), 'A stays a follower: B holds the lock').to.have.length(1);

    // B gives up leadership (a graceful stop): A takes it.
    await b.l.stop();
    const t3 = Date.now();
    while (log.filter((e) => e === 'A:lead').length < 2 && Date.now() - t3 < 5000) await sleep(20);
    expect(log.filter((e) => e === 'A:lead')).to.have.length(2);
    await a.l.stop();
  });
});

