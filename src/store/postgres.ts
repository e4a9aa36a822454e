import type pg from 'pg';
import { uuidv7 } from '../ids.js';
import { startMaintenance, type Maintenance, type PurgePort, type PurgeTable } from './maintenance.js';
import { BATCH_MAX, type StoreOptions } from './options.js';
import { keepLease, logJoining, releaseInstance, renewLease, takeOverGone } from './postgres-instances.js';
import { pgLeader } from './postgres-leader.js';
import { pgLimit, pgReads } from './postgres-reader.js';
import * as ops from './postgres-ops.js';
import { createPool, migratePg, pgStoreError, redactUrl } from './postgres-schema.js';
import { toFlowState, toHeldCounts } from './flow-rows.js';
import { commitHealth } from './commit-health.js';
import { acceptBatcher, inTransaction, insertRequests, pgText, releaseWakes, type CommitStats } from './postgres-writer.js';
import type {
  ClaimRules, DeliveryOutcomeRecord, FlowState, DeliveryRecord, EventRecord, HistoryMessage, ListRequestsOptions, ListRunsOptions, NewDelivery, NewEvent, NewForward, NewKey,
  NewRequestLog, NewRun, RequestRecord, RunEffects, RunEnd, RunRecord, RunStatus, SettleEffects, StoredKey,
} from './records.js';
import { toRun, type RunRow } from './rows.js';
import * as sql from './sql/index.js';
import { isStoreDown, StoreError, type LeaderHandlers, type Leadership, type Store, type TakenOver } from './store.js';

/** Options of {@link PostgresStore.open}: the common ones (options.ts) and where the data is. */
export interface PostgresStoreOptions extends StoreOptions {
  /** `store.url`. Never logged: errors and log lines show it redacted. */
  url: string;
  /** `store.poolSize`: connections at most. */
  poolSize: number;
  /**
   * `store.leaseSeconds`: how long this instance counts as alive after its last renewal
   * (renewed every third of it). Once it has expired, another instance ends its running runs
   * as interrupted and takes over its pending deliveries.
   */
  leaseSeconds: number;
  /** How often a follower tries for the heartbeat leadership (default 1000 ms). */
  leaderRetryMs?: number;
  /** This instance's id, when the caller made it first (so that its own log lines carry it from the start); default: a new one. */
  instanceId?: string;
}

const NONE_HELD: readonly number[] = Object.freeze([]);

/** Retention's statement per table (sql/*.ts), each deleting at most $2 rows older than $1. */
const PURGE_SQL: Record<PurgeTable | 'requests', string> = {
  runs: sql.runs.purgeRuns.pg,
  history: sql.history.purgeHistory.pg,
  events: sql.events.purgeEvents.pg,
  outbox: sql.outbox.purgeOutbox.pg,
  requests: sql.requests.purgeRequests.pg,
};

/**
 * The store on PostgreSQL (`store.kind: postgres`, CONTRACT.md §10), with the semantics of
 * the SQLite store (store.ts). Accepts are group-committed (postgres-writer.ts); every other
 * write is one transaction of its own on the pool. A database that goes away makes calls
 * reject with `unavailable` (503 on the request path); the pool reconnects by itself, so the
 * store serves again once the database is back. Retention and the purges are
 * maintenance.ts's, over this store's purge statements.
 *
 * Several instances on one database behave as one (CONTRACT.md §10): each store holds an
 * instance lease (postgres-instances.ts), a survivor takes over what a gone instance held
 * ({@link PostgresStore.takeOver}), and the heartbeat leader is elected in postgres-leader.ts
 * and hears `now` triggers through NOTIFY (postgres-writer.ts insertEvents).
 */
export class PostgresStore implements Store {
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing: Promise<void> | undefined;
  private readonly reads;
  private readonly batcher;
  private readonly maintenance: Maintenance;
  /** Maintenance now, beside its own timers (maintenance.ts): a retention pass, its request-log part, the key purge. */
  readonly purgeExpired: Maintenance['purgeExpired'];
  readonly purgeRequestLog: Maintenance['purgeRequestLog'];
  readonly purgeExpiredKeys: Maintenance['purgeExpiredKeys'];
  private readonly lease: { stop(): Promise<void> };
  private otherCommits = 0;
  private readonly calls = new Set<Promise<unknown>>();
  private leaderships = new Set<Leadership>();
  private readonly health;

  private constructor(
    private readonly pool: pg.Pool, private readonly opts: PostgresStoreOptions,
    /** This instance's id: a new one each open, so a restart is a new instance (see close()). */
    readonly instanceId: string,
  ) {
    this.health = commitHealth(opts.log);
    this.reads = pgReads(pool);
    this.maintenance = startMaintenance(this.purgePort(), opts);
    ({ purgeExpired: this.purgeExpired, purgeRequestLog: this.purgeRequestLog, purgeExpiredKeys: this.purgeExpiredKeys } = this.maintenance);
    this.batcher = acceptBatcher((fn) => this.tx(fn), () => this.maintenance.keysSince(), opts.batchMax ?? BATCH_MAX, opts.onCommit);
    this.lease = keepLease((fn) => this.tx(fn), instanceId, opts.leaseSeconds, opts.log, () => this.state === 'open');
  }

  /**
   * Connects and migrates (under an advisory lock: stores opening together are safe). Rejects
   * with {@link StoreError} `unavailable` when the database cannot be reached, naming the URL
   * without its password.
   */
  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
    const instanceId = opts.instanceId ?? uuidv7();
    const pool = createPool({
      url: opts.url,
      max: opts.poolSize,
      onIdleError: (err) => opts.log.warn({ err: pgStoreError(err) }, 'a database connection failed; the pool opens a new one when needed'),
    });
    try {
      const client = await pool.connect();
      try {
        const { from, to } = await migratePg(client);
        if (from !== to) opts.log.info({ url: redactUrl(opts.url), from, to }, 'store schema migrated');
        await renewLease(client, instanceId, opts.leaseSeconds);
        await logJoining(client, instanceId, opts.log);
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => {});
      const e = pgStoreError(err);
      throw new StoreError(e.code, `cannot open the store in ${redactUrl(opts.url)}: ${e.message}`, { cause: err });
    }
    return new PostgresStore(pool, opts, instanceId);
  }

  async accept(events: NewEvent[], runs: NewRun[], keys?: NewKey[], forwards?: NewForward[], request?: NewRequestLog): Promise<readonly number[]> {
    this.check();
    if (events.length === 0 && runs.length === 0 && !keys?.length) {
      if (request) await this.logRequests([request]);
      return NONE_HELD;
    }
    return (await this.batcher.accept({ events, runs, keys, forwards, request })) ?? NONE_HELD;
  }

  logRequests(rows: NewRequestLog[]): Promise<void> {
    return this.guard(async () => {
      if (rows.length === 0) return;
      await this.tx((c) => insertRequests(c, rows));
      this.otherCommits++;
    });
  }

  listRequests(opts: ListRequestsOptions): Promise<RequestRecord[]> {
    return this.guard(() => this.reads.listRequests(opts));
  }

  getRequest(seq: number): Promise<RequestRecord | undefined> {
    return this.guard(() => this.reads.getRequest(seq));
  }

  findKeys(keys: string[]): Promise<(StoredKey | undefined)[]> {
    return this.guard(() => this.reads.findKeys(keys, this.maintenance.keysSince()));
  }

  listEvents(after: number, limit: number, maxBytes?: number): Promise<EventRecord[]> {
    return this.guard(() => this.reads.listEvents(after, limit, maxBytes));
  }

  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.guard(() => this.reads.getRun(runId));
  }

  listRuns(opts: ListRunsOptions): Promise<RunRecord[]> {
    return this.guard(() => this.reads.listRuns(opts));
  }

  countRuns(): Promise<Record<RunStatus, number>> {
    return this.guard(() => this.reads.countRuns());
  }

  claimRuns(limit: number, startedAt: string, rules?: ClaimRules): Promise<RunRecord[]> {
    return this.guard(async () => {
      const n = pgLimit(limit);
      if (n === 0) return [];
      for (let attempt = 0; ; attempt++) {
        try {
          const rows = await this.tx(async (c) => {
            if (!rules) return (await c.query<RunRow>(sql.runs.claimRuns.pg, [n, startedAt, this.instanceId])).rows;
            await c.query(sql.runs.claimRunsWithRules.pgLock);
            const limits = Object.entries(rules.limits ?? {});
            const params = [n, startedAt, this.instanceId, rules.held ?? [], limits.map(([s]) => s), limits.map(([, l]) => l)];
            return (await c.query<RunRow>(sql.runs.claimRunsWithRules.pg, params)).rows;
          });
          return rows.sort((a, b) => a.seq - b.seq).map(toRun);
        } catch (err) {
          // Lost the race for a session's one running slot to another claim: try again (it now sees that run).
          if (!(err instanceof StoreError && err.code === 'constraint') || attempt >= 5) throw err;
        }
      }
    });
  }

  pauseMapping(id: string, paused: boolean): Promise<void> {
    return this.guard(async () => {
      if (paused) await this.pool.query(sql.flow.pause.pg, [id, this.maintenance.clock().toISOString()]);
      else await this.pool.query(sql.flow.resume.pg, [id]);
    });
  }

  flowState(): Promise<FlowState> {
    return this.guard(async () => toFlowState((await this.pool.query<{ name: string; what: string }>(sql.flow.flowState.pg)).rows));
  }

  releaseWakes(source: string): Promise<number> {
    return this.guard(() => this.tx((c) => releaseWakes(c, source)));
  }

  countHeld(): Promise<Record<string, number>> {
    return this.guard(async () => toHeldCounts((await this.pool.query<{ source: string; n: string }>(sql.flow.countHeld.pg)).rows));
  }

  takeRate(key: string, limit: number): Promise<number> {
    return this.guard(async () => Number((await this.pool.query<{ wait: string }>(sql.rates.takeRate.pg, [key, limit])).rows[0]!.wait));
  }

  returnRate(key: string): Promise<void> {
    return this.guard(async () => {
      await this.pool.query(sql.rates.returnRate.pg, [key]);
    });
  }

  takeOver(limit: number): Promise<TakenOver> {
    return this.guard(() => takeOverGone((fn) => this.tx(fn), this.instanceId, limit, this.opts.log));
  }

  lead(handlers: LeaderHandlers): Promise<Leadership> {
    return this.guard(async () => {
      const l = await pgLeader({ url: this.opts.url, log: this.opts.log, retryMs: this.opts.leaderRetryMs ?? 1000 }, handlers);
      this.leaderships.add(l);
      return { stop: () => (this.leaderships.delete(l), l.stop()) };
    });
  }

  finishRun(runId: string, end: RunEnd, effects: RunEffects): Promise<void> {
    return this.guard(() => this.tx((c) => ops.finishRun(c, runId, end, effects, this.maintenance.clock().toISOString())));
  }

  requeueRuns(runIds: string[]): Promise<void> {
    return this.guard(async () => {
      if (runIds.length === 0) return;
      await this.tx((c) => c.query(sql.runs.requeueRuns.pg, [runIds]));
    });
  }

  history(sessionKey: string, limit: number): Promise<HistoryMessage[]> {
    return this.guard(() => this.reads.history(sessionKey, limit));
  }

  appendHistory(
    sessionKey: string, messages: HistoryMessage[], state?: Record<string, string>, events: NewEvent[] = [], delivery?: NewDelivery,
  ): Promise<void> {
    return this.guard(() => this.tx((c) => ops.appendHistory(c, sessionKey, messages, state, events, delivery, this.maintenance.clock().toISOString())));
  }

  getState(key: string): Promise<string | undefined> {
    return this.guard(() => this.reads.getState(key));
  }

  claimDeliveries(now: string, limit: number, leaseUntil: string): Promise<{ deliveries: DeliveryRecord[]; nextAt?: string }> {
    return this.guard(() => this.tx((c) => ops.claimDeliveries(c, now, pgLimit(limit), leaseUntil, this.instanceId)));
  }

  ackPart(id: number, part: number): Promise<void> {
    return this.guard(async () => {
      await this.tx((c) => c.query(sql.outbox.ackPart.pg, [id, part]));
    });
  }

  retryDelivery(id: number, at: string, error: string): Promise<void> {
    return this.guard(async () => {
      await this.tx((c) => c.query(sql.outbox.retryDelivery.pg, [id, at, pgText(error)]));
    });
  }

  settleDelivery(id: number, outcome: DeliveryOutcomeRecord, effects: SettleEffects): Promise<void> {
    return this.guard(() => this.tx((c) => ops.settleDelivery(c, id, outcome, effects)));
  }

  commitProblem(): string | undefined {
    return this.health.problem();
  }

  /** Commit counters since open: accept batches, plus retention's and the request log's short transactions. */
  stats(): CommitStats {
    const s = this.batcher.stats;
    return { ...s, commits: s.commits + this.otherCommits };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.maintenance.stop();
      const renewed = this.lease.stop();
      this.state = 'closing'; // new calls reject from here on; queued accepts still commit
      await Promise.allSettled([...this.leaderships].map((l) => l.stop()));
      await this.batcher.drain();
      await Promise.allSettled([...this.calls]);
      await renewed;
      await releaseInstance((fn) => inTransaction(this.pool, fn), this.instanceId, this.opts.log);
      await this.pool.end();
      this.state = 'closed';
    })();
    return this.closing;
  }

  /**
   * Maintenance's writes: each statement (sql/*.ts) one short transaction of at most `max`
   * rows, oldest first; a full batch means there may be more.
   */
  private purgePort(): PurgePort {
    const rowsOf = (r: pg.QueryResult) => r.rowCount ?? 0;
    return {
      purge: async (table, before, after, max) => {
        const deleted = rowsOf(await this.tx((c) => c.query(PURGE_SQL[table], [before, max])));
        this.otherCommits++;
        return deleted < max ? { deleted } : { deleted, next: after };
      },
      purgeBodies: async (now, max) => {
        const n = rowsOf(await this.tx((c) => c.query(sql.requests.purgeBodies.pg, [now, max])));
        this.otherCommits++;
        return n;
      },
      purgeKeys: async (before, max) => rowsOf(await this.tx((c) => c.query(sql.idempotency.purgeKeys.pg, [before, max]))),
      guard: (fn) => this.guard(fn),
      isOpen: () => this.state === 'open',
    };
  }

  private check(): void {
    if (this.state !== 'open') throw new StoreError('closed', 'the store is closed');
  }

  /** Runs a call unless the store is closing; close() waits for the calls under way. */
  private guard<T>(fn: () => Promise<T>): Promise<T> {
    if (this.state !== 'open') return Promise.reject(new StoreError('closed', 'the store is closed'));
    const p = fn();
    this.calls.add(p);
    const done = () => void this.calls.delete(p);
    p.then(done, done);
    return p;
  }

  /** One transaction on the pool; whether it committed is the store's health (commit-health.ts). */
  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      const value = await inTransaction(this.pool, fn);
      this.health.committed();
      return value;
    } catch (err) {
      if (isStoreDown(err)) this.health.failed(err, pgProblem(err));
      throw err;
    }
  }
}

/**
 * A transaction's failure as the senders and /healthz may read it: its cause in words, never
 * the URL (SQLSTATE classes: https://www.postgresql.org/docs/current/errcodes-appendix.html).
 */
function pgProblem(err: StoreError): string {
  const code = String((err.cause as { code?: unknown } | undefined)?.code ?? '');
  if (/^57P0[123]$/.test(code)) return 'PostgreSQL is shutting down or restarting';
  if (code === '53100') return "no space left on PostgreSQL's disk";
  if (code.startsWith('53')) return `PostgreSQL is out of resources (SQLSTATE ${code})`;
  return 'PostgreSQL cannot be reached';
}
