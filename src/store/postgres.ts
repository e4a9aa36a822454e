import type pg from 'pg';
import { uuidv7 } from '../ids.js';
import type { Logger } from '../log.js';
import { toDelivery, toRun, type OutboxRow, type RunRow } from './rows.js';
import { createPool, migratePg, pgStoreError, redactUrl } from './postgres-schema.js';
import { pgLeader } from './postgres-leader.js';
import { pgLimit, pgReads } from './postgres-reader.js';
import { acceptBatcher, inTransaction, insertEvents, insertOutbox, insertRequests, pgText, type CommitStats } from './postgres-writer.js';
import type {
  DeliveryOutcomeRecord, DeliveryRecord, EventRecord, HistoryMessage, ListRunsOptions, NewDelivery, NewEvent, NewForward, NewKey, NewRun, RunEffects, RunStatus, RunEnd, RunRecord, SettleEffects, StoredKey, ListRequestsOptions, NewRequestLog, RequestRecord,
} from './records.js';
import { StoreError, type LeaderHandlers, type Leadership, type Store, type TakenOver } from './store.js';

/** Options of {@link PostgresStore.open}. */
export interface PostgresStoreOptions {
  /** `store.url`. Never logged: errors and log lines show it redacted. */
  url: string;
  /** `store.poolSize`: connections at most. */
  poolSize: number;
  log: Logger;
  /** Most accepts per transaction (default 512). */
  batchMax?: number;
  /** Called after each group commit with how many accept calls it carried (the metrics' commit batch size). */
  onCommit?: (accepts: number) => void;
  /** `store.retainDays` (see SqliteStoreOptions); 0 or absent keeps everything. */
  retainDays?: number;
  clock?: () => Date;
  /** `hooks.idempotencyWindowSeconds` (default 86400). */
  idempotencyWindowSeconds?: number;
  keysPurgeEveryMs?: number;
  purgeEveryMs?: number;
  /**
   * `store.leaseSeconds` (default 30): how long this instance counts as alive after its last
   * renewal (renewed every third of it). Once it has expired, another instance ends its
   * running runs as interrupted and takes over its pending deliveries.
   */
  leaseSeconds?: number;
  /** How often a follower tries for the heartbeat leadership (default 1000 ms). */
  leaderRetryMs?: number;
}

const DEFAULT_LEASE_SECONDS = 30;

const DEFAULT_KEY_WINDOW_SECONDS = 86_400;
const NONE_HELD: readonly number[] = Object.freeze([]);
const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows one purge statement deletes at most: each is a short transaction among the others. */
const PURGE_BATCH = 500;
const ENDED = ['succeeded', 'failed', 'timed_out'];

/** Rows removed by one retention pass (as SqliteStore's). */
export type PgPurgeCounts = Record<'runs' | 'history' | 'events' | 'outbox', number>;

/**
 * Retention's statements, one per table, each deleting at most $2 rows older than $1 (ISO),
 * oldest first. A run goes once ended before $1 with no pending delivery, its outbox row with
 * it; heartbeat rows once settled. Identities are never reused, so seq goes on.
 */
const PURGE_SQL = {
  runs: `WITH doomed AS (
      SELECT run_id FROM runs WHERE created_at < $1 AND status IN ('succeeded', 'failed', 'timed_out') AND ended_at < $1
        AND NOT EXISTS (SELECT 1 FROM outbox AS o WHERE o.run_id = runs.run_id AND o.status = 'pending')
      ORDER BY seq LIMIT $2),
    rows AS (DELETE FROM outbox WHERE run_id IN (SELECT run_id FROM doomed))
    DELETE FROM runs WHERE run_id IN (SELECT run_id FROM doomed)`,
  history: 'DELETE FROM history WHERE seq IN (SELECT seq FROM history WHERE at < $1 ORDER BY seq LIMIT $2)',
  events: 'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < $1 ORDER BY seq LIMIT $2)',
  outbox: "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE run_id IS NULL AND status <> 'pending' AND created_at < $1 ORDER BY id LIMIT $2)",
} as const;

/**
 * The oldest queued run of each session that has none running, oldest first, locked for this
 * claim; rows another claim holds are skipped, not waited for (SKIP LOCKED). A run behind a
 * queued predecessor is not a head, so a claim never takes two runs of a session, and a
 * concurrent claim that locked the head makes the others skip the whole session. Should two
 * claims still race (one commits between the other's snapshot and its lock), the partial
 * unique index runs_one_running refuses the second running run; that claim is retried.
 */
const CLAIM_SQL = `UPDATE runs SET status = 'running', started_at = $2, instance = $3
  WHERE seq IN (
    SELECT q.seq FROM runs AS q
    WHERE q.status = 'queued'
      AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.session_key = q.session_key AND r.status = 'running')
      AND NOT EXISTS (SELECT 1 FROM runs AS p WHERE p.session_key = q.session_key AND p.status = 'queued' AND p.seq < q.seq)
    ORDER BY q.seq LIMIT $1
    FOR UPDATE SKIP LOCKED)
  RETURNING *`;

/** Pending rows due at $1 whose lease has ended, oldest due first, skipping rows another claim holds. */
const CLAIM_OUTBOX_SQL = `UPDATE outbox SET attempts = attempts + 1, lease_until = $3, instance = $4
  WHERE id IN (
    SELECT id FROM outbox WHERE status = 'pending' AND next_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
    ORDER BY next_at LIMIT $2
    FOR UPDATE SKIP LOCKED)
  RETURNING *`;

/** No live instance row holds `instance` (of the enclosing row): its instance is gone (or it never had one). */
const GONE = 'NOT EXISTS (SELECT 1 FROM instances AS i WHERE i.id = instance AND i.lease_until > now())';

/**
 * Running runs of gone instances ({@link GONE}), taken over by instance $1, at most $2. One
 * statement: rows another takeover holds are skipped, and one that a concurrent takeover has
 * just committed is re-checked against its new instance (live: left alone), so each run is
 * returned to one survivor only.
 */
const TAKE_OVER_SQL = `UPDATE runs SET instance = $1
  WHERE seq IN (
    SELECT seq FROM runs WHERE status = 'running' AND instance IS DISTINCT FROM $1 AND ${GONE}
    ORDER BY seq LIMIT $2
    FOR UPDATE SKIP LOCKED)
  AND ${GONE}
  RETURNING *`;

/** Outbox leases of gone instances, released (their rows are claimable at once). */
const RELEASE_GONE_SQL = `UPDATE outbox SET lease_until = NULL, instance = NULL
  WHERE status = 'pending' AND instance IS NOT NULL AND instance <> $1 AND ${GONE}`;

/**
 * The store on PostgreSQL (`store.kind: postgres`, CONTRACT.md §10), with the semantics of
 * the SQLite store (store.ts). Accepts are group-committed (postgres-writer.ts); every other
 * write is one transaction of its own on the pool. A database that goes away makes calls
 * reject with `unavailable` (503 on the request path); the pool reconnects by itself, so the
 * store serves again once the database is back.
 *
 * Several instances on one database behave as one (CONTRACT.md §10; README "Several
 * instances"): each store registers an instance row with a lease it renews in the background;
 * runs it claims and outbox rows it leases name it. A survivor takes over what a gone
 * instance held ({@link PostgresStore.takeOver}); the heartbeat leader is elected in
 * postgres-leader.ts and hears `now` triggers through NOTIFY ({@link insertEvents}).
 */
export class PostgresStore implements Store {
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing: Promise<void> | undefined;
  private readonly reads;
  private readonly batcher;
  private readonly clock: () => Date;
  private readonly keyWindowMs: number;
  private purgeTimer: NodeJS.Timeout | undefined;
  private keyPurgeTimer: NodeJS.Timeout | undefined;
  private purging: Promise<PgPurgeCounts> | undefined;
  private otherCommits = 0;
  private readonly calls = new Set<Promise<unknown>>();
  private leaseTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private readonly leaseSeconds: number;
  private leaderships = new Set<Leadership>();

  private constructor(
    private readonly pool: pg.Pool, private readonly log: Logger, private readonly opts: PostgresStoreOptions,
    /** This instance's id: a new one each open, so a restart is a new instance (see close()). */
    readonly instanceId: string,
  ) {
    this.clock = opts.clock ?? (() => new Date());
    this.keyWindowMs = (opts.idempotencyWindowSeconds ?? DEFAULT_KEY_WINDOW_SECONDS) * 1000;
    this.reads = pgReads(pool);
    this.batcher = acceptBatcher(pool, () => this.keysSince(), opts.batchMax ?? 512, opts.onCommit);
    const purgeEveryMs = opts.purgeEveryMs ?? 60 * 60 * 1000;
    // Always: kept request bodies expire by their own time (hooks.keepBodies), whatever retainDays says.
    this.schedulePurge(Math.min(purgeEveryMs, 60_000), purgeEveryMs);
    this.scheduleKeyPurge(opts.keysPurgeEveryMs ?? Math.min(Math.max(this.keyWindowMs / 10, 1000), 600_000));
    this.leaseSeconds = opts.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.scheduleRenew();
  }

  /**
   * Connects and migrates (under an advisory lock: stores opening together are safe). Rejects
   * with {@link StoreError} `unavailable` when the database cannot be reached, naming the URL
   * without its password.
   */
  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
    const instanceId = uuidv7();
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
        await renewLease(client, instanceId, opts.leaseSeconds ?? DEFAULT_LEASE_SECONDS);
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => {});
      const e = pgStoreError(err);
      throw new StoreError(e.code, `cannot open the store in ${redactUrl(opts.url)}: ${e.message}`, { cause: err });
    }
    return new PostgresStore(pool, opts.log, opts, instanceId);
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

  /** The request log's part of a retention pass (as SqliteStore's): old rows (store.retainDays), then bodies past their time. */
  purgeRequestLog(): Promise<{ requests: number; bodies: number }> {
    return this.guard(async () => {
      const now = this.clock();
      const counts = { requests: 0, bodies: 0 };
      const days = this.opts.retainDays ?? 0;
      const steps: [keyof typeof counts, string, string][] = [
        ['bodies', 'UPDATE requests SET body = NULL, body_until = NULL WHERE seq IN (SELECT seq FROM requests WHERE body_until <= $1 ORDER BY body_until LIMIT $2)', now.toISOString()],
      ];
      if (days > 0) {
        steps.unshift(['requests', 'DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE at < $1 ORDER BY seq LIMIT $2)', new Date(now.getTime() - days * DAY_MS).toISOString()]);
      }
      for (const [what, sql, at] of steps) {
        for (;;) {
          const r = await this.tx((c) => c.query(sql, [at, PURGE_BATCH]));
          this.otherCommits++;
          counts[what] += r.rowCount ?? 0;
          if ((r.rowCount ?? 0) < PURGE_BATCH) break;
        }
      }
      if (counts.requests + counts.bodies > 0) this.log.info({ ...counts }, 'store retention: old request-log rows and bodies purged');
      return counts;
    });
  }

  findKeys(keys: string[]): Promise<(StoredKey | undefined)[]> {
    return this.guard(() => this.reads.findKeys(keys, this.keysSince()));
  }

  /** Keys accepted before this ISO time are past the idempotency window. */
  private keysSince(): string {
    return new Date(this.clock().getTime() - this.keyWindowMs).toISOString();
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

  claimRuns(limit: number, startedAt: string): Promise<RunRecord[]> {
    return this.guard(async () => {
      const n = pgLimit(limit);
      if (n === 0) return [];
      for (let attempt = 0; ; attempt++) {
        try {
          const rows = await this.tx(async (c) => (await c.query<RunRow>(CLAIM_SQL, [n, startedAt, this.instanceId])).rows);
          return rows.sort((a, b) => a.seq - b.seq).map(toRun);
        } catch (err) {
          // Lost the race for a session's one running slot to another claim: try again (it now sees that run).
          if (!(err instanceof StoreError && err.code === 'constraint') || attempt >= 5) throw err;
        }
      }
    });
  }

  takeOver(limit: number): Promise<TakenOver> {
    return this.guard(async () => {
      const n = pgLimit(limit);
      const { runs, released } = await this.tx(async (c) => {
        const released = (await c.query(RELEASE_GONE_SQL, [this.instanceId])).rowCount ?? 0;
        const runs = n === 0 ? [] : (await c.query<RunRow>(TAKE_OVER_SQL, [this.instanceId, n])).rows;
        // Rows of instances gone for a day are history: nothing can still name them as live.
        await c.query("DELETE FROM instances WHERE lease_until < now() - interval '1 day'");
        return { runs, released };
      });
      if (released > 0) this.log.warn({ released }, 'outbox leases of a gone instance released: a survivor sends those deliveries');
      return { runs: runs.sort((a, b) => a.seq - b.seq).map(toRun), deliveries: released };
    });
  }

  lead(handlers: LeaderHandlers): Promise<Leadership> {
    return this.guard(async () => {
      const l = await pgLeader({ url: this.opts.url, log: this.log, retryMs: this.opts.leaderRetryMs ?? 1000 }, handlers);
      this.leaderships.add(l);
      return { stop: () => (this.leaderships.delete(l), l.stop()) };
    });
  }

  /** Renews this instance's lease every third of it, off the request path; a failure is retried at the next tick. */
  private scheduleRenew(): void {
    this.leaseTimer = setTimeout(() => {
      if (this.state !== 'open') return;
      this.renewing = this.tx((c) => renewLease(c, this.instanceId, this.leaseSeconds)).then(
        () => {},
        (err) => this.log.warn({ err }, 'renewing this instance\'s lease failed; retrying (past store.leaseSeconds, other instances take over its runs)'),
      ).finally(() => {
        this.renewing = undefined;
        if (this.state === 'open') this.scheduleRenew();
      });
    }, (this.leaseSeconds * 1000) / 3);
    this.leaseTimer.unref();
  }

  finishRun(runId: string, end: RunEnd, effects: RunEffects): Promise<void> {
    return this.guard(() => this.tx(async (c) => {
      if (!ENDED.includes(end.status)) throw new StoreError('constraint', `a run cannot end with status ${String(end.status)}`);
      const { rows } = await c.query<{ session_key: string }>(
        `UPDATE runs SET status = $2, ended_at = $3, reply = $4, error = $5, error_code = $6, delivered_to = $7
         WHERE run_id = $1 AND status = 'running' RETURNING session_key`,
        [runId, end.status, end.endedAt, pgText(end.reply ?? null), pgText(end.error ?? null), end.errorCode ?? null, end.deliveredTo ?? null],
      );
      if (rows.length === 0) throw new StoreError('run_not_running', `run ${runId} is not running`);
      if (effects.summary) await insertEvents(c, [effects.summary]);
      if (effects.delivery) await insertOutbox(c, effects.delivery, runId);
      await this.appendTurns(c, rows[0]!.session_key, effects.history ?? []);
    }));
  }

  requeueRuns(runIds: string[]): Promise<void> {
    return this.guard(async () => {
      if (runIds.length === 0) return;
      await this.tx((c) => c.query("UPDATE runs SET status = 'queued', started_at = NULL WHERE run_id = ANY($1) AND status = 'running'", [runIds]));
    });
  }

  history(sessionKey: string, limit: number): Promise<HistoryMessage[]> {
    return this.guard(() => this.reads.history(sessionKey, limit));
  }

  appendHistory(
    sessionKey: string, messages: HistoryMessage[], state?: Record<string, string>, events: NewEvent[] = [], delivery?: NewDelivery,
  ): Promise<void> {
    return this.guard(() => this.tx(async (c) => {
      await this.appendTurns(c, sessionKey, messages);
      await setState(c, state);
      await insertEvents(c, events);
      if (delivery) await insertOutbox(c, delivery, null);
    }));
  }

  private async appendTurns(c: pg.ClientBase, sessionKey: string, messages: readonly HistoryMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await c.query(
      `INSERT INTO history (session_key, role, content, at)
       SELECT $1, role, content, $4 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS m(role, content, ord) ORDER BY ord`,
      [pgText(sessionKey), messages.map((m) => m.role), messages.map((m) => pgText(m.content)), this.clock().toISOString()],
    );
  }

  getState(key: string): Promise<string | undefined> {
    return this.guard(() => this.reads.getState(key));
  }

  claimDeliveries(now: string, limit: number, leaseUntil: string): Promise<{ deliveries: DeliveryRecord[]; nextAt?: string }> {
    return this.guard(() => this.tx(async (c) => {
      const n = pgLimit(limit);
      const rows = n === 0 ? [] : (await c.query<OutboxRow>(CLAIM_OUTBOX_SQL, [now, n, leaseUntil, this.instanceId])).rows;
      rows.sort((a, b) => a.next_at.localeCompare(b.next_at) || a.id - b.id);
      // When the next pending row can be claimed: its due time, or its lease's end if later.
      const next = await c.query<{ at: string | null }>("SELECT MIN(GREATEST(next_at, COALESCE(lease_until, ''))) AS at FROM outbox WHERE status = 'pending'");
      const nextAt = next.rows[0]?.at ?? undefined;
      const deliveries = rows.map(toDelivery);
      return nextAt === undefined ? { deliveries } : { deliveries, nextAt };
    }));
  }

  ackPart(id: number, part: number): Promise<void> {
    return this.guard(async () => {
      await this.tx((c) => c.query("UPDATE outbox SET parts_sent = GREATEST(parts_sent, $2 + 1) WHERE id = $1 AND status = 'pending' AND parts > $2", [id, part]));
    });
  }

  retryDelivery(id: number, at: string, error: string): Promise<void> {
    return this.guard(async () => {
      await this.tx((c) => c.query("UPDATE outbox SET next_at = $2, error = $3, lease_until = NULL WHERE id = $1 AND status = 'pending'", [id, at, pgText(error)]));
    });
  }

  settleDelivery(id: number, outcome: DeliveryOutcomeRecord, effects: SettleEffects): Promise<void> {
    return this.guard(() => this.tx(async (c) => {
      const { rows } = await c.query<{ run_id: string | null }>(
        `UPDATE outbox SET status = $2, error = $3, settled_at = $4, lease_until = NULL
         WHERE id = $1 AND status = 'pending' RETURNING run_id`,
        [id, outcome.status, outcome.status === 'failed' ? pgText(outcome.error) : null, outcome.at],
      );
      if (rows.length === 0) throw new StoreError('constraint', `delivery ${id} is not pending`);
      const runId = rows[0]!.run_id;
      if (runId !== null && effects.run) {
        await c.query(
          // A forward row also ends its (queued) run: status, ended_at and forwarded.
          `UPDATE runs SET delivered_to = COALESCE($2, delivered_to), error = COALESCE($3, error), error_code = COALESCE($4, error_code),
             status = COALESCE($5, status), ended_at = COALESCE($6, ended_at), forwarded = COALESCE($7, forwarded)
           WHERE run_id = $1`,
          [runId, effects.run.deliveredTo ?? null, pgText(effects.run.error ?? null), effects.run.errorCode ?? null,
            effects.run.status ?? null, effects.run.endedAt ?? null, effects.run.forwarded ? JSON.stringify(effects.run.forwarded) : null],
        );
      }
      if (effects.summary) await insertEvents(c, [effects.summary]);
      await setState(c, effects.state);
    }));
  }

  /** Deletes idempotency keys older than the window, {@link PURGE_BATCH} at a time. Returns how many went. */
  purgeExpiredKeys(): Promise<number> {
    return this.guard(async () => {
      const before = this.keysSince();
      let total = 0;
      for (;;) {
        const r = await this.tx((c) => c.query('DELETE FROM idempotency WHERE key IN (SELECT key FROM idempotency WHERE at < $1 ORDER BY at LIMIT $2)', [before, PURGE_BATCH]));
        total += r.rowCount ?? 0;
        if ((r.rowCount ?? 0) < PURGE_BATCH) break;
      }
      if (total > 0) this.log.info({ deleted: total, before }, 'idempotency keys past the window purged');
      return total;
    });
  }

  /** One retention pass (`store.retainDays`), in short transactions of {@link PURGE_BATCH} rows; a pass under way is joined. */
  purgeExpired(): Promise<PgPurgeCounts> {
    this.purging ??= this.guard(() => this.purgePass()).finally(() => (this.purging = undefined));
    return this.purging;
  }

  private async purgePass(): Promise<PgPurgeCounts> {
    const counts: PgPurgeCounts = { runs: 0, history: 0, events: 0, outbox: 0 };
    await this.purgeRequestLog();
    const days = this.opts.retainDays ?? 0;
    if (days <= 0) return counts;
    const before = new Date(this.clock().getTime() - days * DAY_MS).toISOString();
    for (const table of ['runs', 'history', 'events', 'outbox'] as const) {
      for (;;) {
        const r = await this.tx((c) => c.query(PURGE_SQL[table], [before, PURGE_BATCH]));
        this.otherCommits++;
        counts[table] += r.rowCount ?? 0;
        if ((r.rowCount ?? 0) < PURGE_BATCH) break;
      }
    }
    if (counts.runs + counts.history + counts.events + counts.outbox > 0) this.log.info({ ...counts, before }, 'store retention: old rows purged');
    return counts;
  }

  private schedulePurge(firstMs: number, everyMs: number): void {
    this.purgeTimer = setTimeout(() => {
      if (this.state !== 'open') return;
      this.purgeExpired().then(
        () => this.state === 'open' && this.schedulePurge(everyMs, everyMs),
        (err) => {
          if (!(err instanceof StoreError && err.code === 'closed')) this.log.warn({ err }, 'store retention pass failed; retrying later');
          if (this.state === 'open') this.schedulePurge(everyMs, everyMs);
        },
      );
    }, firstMs);
    this.purgeTimer.unref();
  }

  private scheduleKeyPurge(everyMs: number): void {
    this.keyPurgeTimer = setTimeout(() => {
      if (this.state !== 'open') return;
      this.purgeExpiredKeys().then(
        () => this.state === 'open' && this.scheduleKeyPurge(everyMs),
        (err) => {
          if (!(err instanceof StoreError && err.code === 'closed')) this.log.warn({ err }, 'idempotency key purge failed; retrying later');
          if (this.state === 'open') this.scheduleKeyPurge(everyMs);
        },
      );
    }, everyMs);
    this.keyPurgeTimer.unref();
  }

  /** Commit counters since open: accept batches, plus retention's and the request log's short transactions. */
  stats(): CommitStats {
    const s = this.batcher.stats;
    return { ...s, commits: s.commits + this.otherCommits };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.purgeTimer);
      clearTimeout(this.keyPurgeTimer);
      clearTimeout(this.leaseTimer);
      this.state = 'closing'; // new calls reject from here on; queued accepts still commit
      await Promise.allSettled([...this.leaderships].map((l) => l.stop()));
      await this.batcher.drain();
      await Promise.allSettled([...this.calls]);
      await this.renewing;
      // A graceful stop hands over at once rather than after the lease: the runtime has
      // requeued its runs; its outbox leases are released and its instance row goes.
      await inTransaction(this.pool, async (c) => {
        await c.query("UPDATE outbox SET lease_until = NULL, instance = NULL WHERE instance = $1 AND status = 'pending'", [this.instanceId]);
        await c.query('DELETE FROM instances WHERE id = $1', [this.instanceId]);
      }).catch((err) => this.log.warn({ err }, 'could not release this instance at close; others take over after its lease'));
      await this.pool.end();
      this.state = 'closed';
    })();
    return this.closing;
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

  private tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn);
  }
}

/** Registers or renews an instance's lease: alive until `leaseSeconds` from now (the database's clock). */
async function renewLease(c: pg.ClientBase, id: string, leaseSeconds: number): Promise<void> {
  await c.query(
    `INSERT INTO instances (id, started_at, lease_until) VALUES ($1, now(), now() + make_interval(secs => $2))
     ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`,
    [id, leaseSeconds],
  );
}

/** Sets state keys (upsert). */
async function setState(c: pg.ClientBase, state: Record<string, string> | undefined): Promise<void> {
  const entries = Object.entries(state ?? {});
  if (entries.length === 0) return;
  await c.query(
    `INSERT INTO state (key, value) SELECT * FROM unnest($1::text[], $2::text[])
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    [entries.map(([k]) => pgText(k)), entries.map(([, v]) => pgText(v))],
  );
}
