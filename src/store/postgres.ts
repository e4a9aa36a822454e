import type pg from 'pg';
import { uuidv7 } from '../ids.js';
import { pgProblem, pgStoreError, refuseOtherSchema } from './db-errors.js';
import { pgDb, type Db } from './dialect.js';
import type { CommitStats } from './group-commit.js';
import { repeat } from './maintenance.js';
import { pgLeader } from './postgres-leader.js';
import { createPool, redactUrl } from './postgres-pool.js';
import { openMigrated, PG_SCHEMA_VERSION, schemaVersion } from './postgres-schema.js';
import { readerOf } from './reads.js';
import { toRun, type RunRow } from './rows.js';
import { StoreShell, type StoreOptions } from './shell.js';
import * as sql from './sql/index.js';
import { isStoreDown, StoreError, type LeaderHandlers, type Leadership, type StoreReader, type TakenOver } from './store.js';
import { applyOps, runBatch, type BatchOutcome, type WriteOp } from './writes.js';

/** Reads wait their turn for a read connection longer than accepts for theirs: in line behind other reads, not failed. */
const READ_WAIT_MS = 30_000;

export interface PostgresStoreOptions extends StoreOptions {
  /** `store.url`. Never logged: errors and log lines show it redacted. */
  url: string;
  poolSize: number;
  /** `store.leaseSeconds`: how long this instance counts as alive after its last renewal; then others take over its work. */
  leaseSeconds: number;
  /** How often a follower tries for the heartbeat leadership (default 1000 ms). */
  leaderRetryMs?: number;
  /** This instance's id, when the caller made it first (so that its own log lines carry it from the start); default: a new one. */
  instanceId?: string;
}

/**
 * The store on PostgreSQL (CONTRACT.md §10): accepts group-committed, other writes one transaction
 * each. Each instance holds a lease, renewed every third of `store.leaseSeconds`; a survivor
 * takes over what one whose lease has expired held.
 */
export class PostgresStore extends StoreShell {
  private readonly lease: { stop(): Promise<void> };
  /** Commits of the request log and retention, beside the accept batches: see {@link stats}. */
  private otherCommits = 0;
  private leaderships = new Set<Leadership>();

  private constructor(
    private readonly pool: pg.Pool, private readonly opts: PostgresStoreOptions,
    /** This instance's id: a new one each open, so a restart is a new instance. */
    readonly instanceId: string,
    /** The served reads' connections ({@link splitPool}). */
    private readonly readPool: pg.Pool | undefined,
  ) {
    super(pgDb(pool, () => pool.connect()), opts, instanceId, readPool && pgDb(readPool));
    const every = (opts.leaseSeconds * 1000) / 3;
    const renew = () => this.tx((db) => db.run(sql.instances.renewLease, [instanceId, opts.leaseSeconds]));
    const failed = (err: unknown) => opts.log.warn({ err }, 'renewing this instance\'s lease failed; retrying (past store.leaseSeconds, other instances take over its runs)');
    this.lease = repeat(() => this.state === 'open', renew, failed, every, every);
  }

  /** Connects and migrates (under an advisory lock); `unavailable`, naming the URL without its password, when it cannot. */
  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
    const instanceId = opts.instanceId ?? uuidv7();
    const onIdleError = (err: Error) => opts.log.warn({ err: pgStoreError(err) }, 'a database connection failed; the pool opens a new one when needed');
    const { writes, reads } = splitPool(opts.poolSize);
    const pool = await openMigrated({ url: opts.url, max: writes, onIdleError }, async (client, { from, to }) => {
      if (from !== to) opts.log.info({ url: redactUrl(opts.url), from, to }, 'store schema migrated');
      await pgDb(client).run(sql.instances.renewLease, [instanceId, opts.leaseSeconds]);
      const others = (await pgDb(client).all<{ id: string }>(sql.instances.otherLiveInstances, [instanceId])).map((r) => r.id);
      if (others.length === 0) opts.log.info({ others }, 'the only live instance on this database');
      else opts.log.info({ others }, `joining ${others.length} other live instance${others.length === 1 ? '' : 's'} on this database: ids ${others.join(', ')} (they share the work: docs/several-instances.md)`);
    });
    return new PostgresStore(pool, opts, instanceId, reads > 0 ? createPool({ url: opts.url, max: reads, onIdleError, waitMs: READ_WAIT_MS }) : undefined);
  }

  takeRate(key: string, limit: number): Promise<number> {
    return this.read(async () => Number((await this.db.get<{ wait: string }>(sql.rates.takeRate, [key, limit]))!.wait));
  }

  returnRate(key: string): Promise<void> {
    return this.read(async () => void await this.db.run(sql.rates.returnRate, [key]));
  }

  /** The running runs and outbox leases of instances whose lease has expired. */
  takeOver(limit: number): Promise<TakenOver> {
    const max = this.db.limit(limit);
    return this.guard(async () => {
      const { runs, released } = await this.tx(async (db) => {
        const released = await db.run(sql.instances.releaseGoneLeases, [this.instanceId]);
        const runs = max === 0 ? [] : await db.all<RunRow>(sql.instances.takeOverRuns, [this.instanceId, max]);
        await db.run(sql.instances.forgetGoneInstances);
        return { runs, released };
      });
      if (released > 0) this.opts.log.warn({ released }, 'outbox leases of a gone instance released: a survivor sends those deliveries');
      return { runs: runs.sort((a, b) => a.seq - b.seq).map(toRun), deliveries: released };
    });
  }

  lead(handlers: LeaderHandlers): Promise<Leadership> {
    return this.guard(async () => {
      const l = await pgLeader(this.opts.url, this.opts.log, this.opts.leaderRetryMs ?? 1000, handlers);
      this.leaderships.add(l);
      return { stop: () => (this.leaderships.delete(l), l.stop()) };
    });
  }

  commitProblem(): string | undefined {
    return this.health.problem();
  }

  /** Commit counters since open: accept batches, plus the request log's and retention's transactions. */
  override stats(): CommitStats {
    return { ...this.batcher.stats, commits: this.batcher.stats.commits + this.otherCommits };
  }

  protected async shutdown(): Promise<void> {
    this.maintenance.stop();
    const renewed = this.lease.stop();
    this.state = 'closing'; // new calls reject from here on; queued accepts still commit
    await Promise.allSettled([...this.leaderships].map((l) => l.stop()));
    await this.batcher.idle();
    await this.settled();
    await renewed;
    // Its leases and row go, so that others take over at once, not after the lease.
    await this.db.transaction(async (db) => {
      await db.run(sql.instances.releaseOwnLeases, [this.instanceId]);
      await db.run(sql.instances.removeInstance, [this.instanceId]);
    }).catch((err) => this.opts.log.warn({ err }, 'could not release this instance at close; others take over after its lease'));
    await this.pool.end();
    await this.readPool?.end();
    this.state = 'closed';
  }

  protected async commitBatch(ops: WriteOp[]): Promise<BatchOutcome<StoreError>> {
    const { values, failed } = await this.healthy(() => runBatch(this.db, ops));
    return { values, failed: failed?.map(([i, e]) => [i, pgStoreError(e)]) };
  }

  protected override write<T = void>(op: WriteOp): Promise<T> {
    if (op.kind === 'accept') return super.write<T>(op);
    return this.guard(async () => {
      const [value] = await this.tx((tx) => applyOps(tx, [op]));
      if (op.kind === 'requests' || op.kind === 'purge' || op.kind === 'purgeBodies' || op.kind === 'compactTallies') this.otherCommits++;
      return value as T;
    });
  }

  private tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.healthy(() => this.db.transaction(fn));
  }

  private async healthy<T>(commit: () => Promise<T>): Promise<T> {
    try {
      const value = await commit();
      this.health.committed();
      return value;
    } catch (cause) {
      const err = pgStoreError(cause);
      if (isStoreDown(err)) this.health.failed(err, pgProblem(err));
      throw err;
    }
  }
}

/**
 * `store.poolSize` shared out: a quarter (at least one) for the served reads (the admin API, the
 * console, /metrics, the dispatcher's), so that no read holds a connection an accept waits for;
 * a pool of one is shared.
 */
export function splitPool(size: number): { writes: number; reads: number } {
  const reads = size > 1 ? Math.max(1, Math.floor(size / 4)) : 0;
  return { writes: size - reads, reads };
}

/**
 * A {@link StoreReader} on a small pool, its Db for `hookrelay pause` (`writes`); refuses, saying
 * what to do, a database without the store or at another schema version.
 */
export async function openPgReader(url: string, writes = false): Promise<StoreReader & { db: Db }> {
  const pool = createPool({ url, max: 2, onIdleError: () => {} });
  const where = redactUrl(url);
  try {
    const version = await schemaVersion(pool);
    if (version === 0) throw new StoreError('unavailable', `no store yet in ${where} (\`hookrelay serve\` creates it there)`);
    refuseOtherSchema(`in ${where}`, version, PG_SCHEMA_VERSION, writes ? 'writes' : 'reads');
  } catch (err) {
    await pool.end().catch(() => {});
    if (err instanceof StoreError) throw err;
    throw new StoreError('unavailable', `cannot ${writes ? 'reach' : 'read'} the store in ${where}: ${pgStoreError(err).message}`, { cause: err });
  }
  const db = pgDb(pool);
  return readerOf(db, () => pool.end(), { db });
}
