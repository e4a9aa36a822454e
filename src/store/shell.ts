import { commitHealth } from './commit-health.js';
import type { Db } from './dialect.js';
import { groupCommit, type CommitStats, type GroupCommit, type GroupCommitOptions } from './group-commit.js';
import { startMaintenance, type Maintenance, type MaintenanceOptions } from './maintenance.js';
import { reads, served, type Reads, type ServedReads } from './reads.js';
import type {
  ClaimRules, DeliveryOutcomeRecord, DeliveryRecord, HistoryMessage, NewDelivery, NewEvent, NewForward, NewKey, NewRequestLog, NewRun, RunEffects,
  RunEnd, RunRecord, SettleEffects, StoredKey,
} from './records.js';
import { eventValues, foldedRow, forwardValues, keyValues, requestValues, runValues, toDelivery, toRun, type OutboxRow, type RunRow } from './rows.js';
import { StoreError, type LeaderHandlers, type Leadership, type Store, type TakenOver } from './store.js';
import type { AcceptOp, BatchOutcome, WriteOp } from './writes.js';

/** What every store is opened with, whichever the backend: one options object of resolved values. */
export type StoreOptions = MaintenanceOptions & Pick<GroupCommitOptions, 'batchMax' | 'onCommit'>;

const NONE_HELD: readonly number[] = Object.freeze([]);

/** Where a mapping's handshake secret is kept among the state keys. */
const hookSecretKey = (mappingId: string) => `hook-secret:${mappingId}`;

/**
 * The store, written once over a {@link Db} (reads.ts) and the write ops (writes.ts); a
 * backend (sqlite.ts, postgres.ts) says how a write is committed and adds what only it has:
 * the rate window, takeover of a gone instance, heartbeat leadership.
 */
// The served reads (reads.ts), assigned in the constructor.
export interface StoreShell extends ServedReads {}
export abstract class StoreShell implements Store {
  protected state: 'open' | 'closing' | 'closed' = 'open';
  private readonly calls = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  protected readonly reads: Reads;
  protected readonly maintenance: Maintenance;
  protected readonly health;
  protected readonly batcher: GroupCommit;
  /** A failure that makes every call reject (SQLite: its database file is gone). */
  protected goneError: StoreError | undefined;
  /** Maintenance now, beside its own timers (maintenance.ts): a retention pass, the key purge. */
  readonly purgeExpired: Maintenance['purgeExpired'];
  readonly purgeExpiredKeys: Maintenance['purgeExpiredKeys'];

  /** `readDb`: where the served reads run (a connection no accept waits on); `db` keeps the accept path's own (findKeys). */
  protected constructor(protected readonly db: Db, opts: StoreOptions, protected readonly instance: string | null, readDb: Db = db) {
    this.reads = reads(db);
    Object.assign(this, served(reads(readDb), (read) => this.read(read)));
    this.maintenance = startMaintenance({
      write: <T>(op: WriteOp) => this.write<T>(op),
      guard: (fn) => this.guard(fn),
      isOpen: () => this.state === 'open',
      ...(this.giveBack ? { giveBack: () => this.guard(() => this.giveBack!()) } : {}),
    }, opts);
    ({ purgeExpired: this.purgeExpired, purgeExpiredKeys: this.purgeExpiredKeys } = this.maintenance);
    this.health = commitHealth(opts.log);
    this.batcher = groupCommit({ ...opts, commit: (ops) => this.commitBatch(ops), onBusy: (busy) => this.busy(busy) });
  }

  /** Commits a batch of ops in one transaction (group-commit.ts). */
  protected abstract commitBatch(ops: WriteOp[]): Promise<BatchOutcome<StoreError>>;
  /** Releases what the store holds, once; new calls already reject. */
  protected abstract shutdown(): Promise<void>;
  /** One step of giving freed space back after a retention pass, true while more is left (maintenance.ts); none: the database does it. */
  protected giveBack?(): Promise<boolean>;
  /** While a batch is in flight (SQLite refs its writer thread only then). */
  protected busy(_busy: boolean): void {}

  abstract takeRate(key: string, limit: number): Promise<number>;
  abstract returnRate(key: string): Promise<void>;
  abstract takeOver(limit: number): Promise<TakenOver>;
  abstract lead(handlers: LeaderHandlers): Promise<Leadership>;
  abstract commitProblem(): string | undefined;

  stats(): CommitStats {
    return { ...this.batcher.stats };
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  accept(events: NewEvent[], runs: NewRun[], keys?: NewKey[], forwards?: NewForward[], request?: NewRequestLog): Promise<readonly number[]> {
    if (events.length === 0 && runs.length === 0 && !keys?.length) {
      return request ? this.logRequests([request]).then(() => NONE_HELD) : this.guard(async () => NONE_HELD);
    }
    const folded = request && foldedRow(request, events, runs);
    const op: AcceptOp = { kind: 'accept', events: [], runs: folded?.into === 'runs' ? [] : runs.map(runValues) };
    if (folded?.into !== 'events') for (const e of events) (e.held ? (op.held ??= []) : op.events).push(eventValues(e));
    if (events.some((e) => e.wakesNow && !e.held)) op.wakesNow = true;
    if (forwards?.length) op.forwards = forwards.map((f) => [f.key, forwardValues(f)]);
    if (folded) op.folded = folded;
    else if (request) op.request = requestValues(request);
    if (keys?.length) {
      op.keys = keys.map((k) => ({ values: keyValues(k), events: k.eventIds, runs: k.runIds }));
      op.expiredBefore = this.maintenance.keysSince();
    }
    return this.write<number[] | undefined>(op).then((held) => held ?? NONE_HELD);
  }

  logRequests(rows: NewRequestLog[]): Promise<void> {
    return rows.length === 0 ? this.guard(async () => {}) : this.write({ kind: 'requests', rows: rows.map(requestValues) });
  }

  findKeys(keys: string[]): Promise<(StoredKey | undefined)[]> {
    return this.read(() => this.reads.findKeys(keys, this.maintenance.keysSince()));
  }

  async claimRuns(limit: number, startedAt: string, rules?: ClaimRules): Promise<RunRecord[]> {
    const op: WriteOp = { kind: 'claim', limit: this.db.limit(limit), startedAt, instance: this.instance, ...(rules ? { rules } : {}) };
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.write<RunRow[]>(op)).map(toRun);
      } catch (err) {
        // PostgreSQL: lost the race for a session's one running slot to another claim; again, it now sees that run.
        if (!(err instanceof StoreError && err.code === 'constraint') || attempt >= 5) throw err;
      }
    }
  }

  pauseMapping(id: string, paused: boolean): Promise<void> {
    return this.write({ kind: 'pause', id, paused, at: this.maintenance.clock().toISOString() });
  }

  keepHookSecret(mappingId: string, secret: string, replace: boolean): Promise<string> {
    return this.write<string>({ kind: 'keepState', key: hookSecretKey(mappingId), value: secret, replace });
  }

  hookSecret(mappingId: string): Promise<string | undefined> {
    return this.getState(hookSecretKey(mappingId));
  }

  releaseWakes(source: string): Promise<number> {
    return this.write<number>({ kind: 'releaseWakes', source });
  }

  finishRun(runId: string, end: RunEnd, effects: RunEffects): Promise<void> {
    return this.write({ kind: 'finish', runId, end, effects, at: this.maintenance.clock().toISOString() });
  }

  requeueRuns(runIds: string[]): Promise<void> {
    return runIds.length === 0 ? this.guard(async () => {}) : this.write({ kind: 'requeue', runIds });
  }

  appendHistory(
    sessionKey: string, messages: HistoryMessage[], state?: Record<string, string>, events: NewEvent[] = [], delivery?: NewDelivery,
  ): Promise<void> {
    const at = this.maintenance.clock().toISOString();
    const wakesNow = events.some((e) => e.wakesNow);
    return this.write({ kind: 'append', sessionKey, messages, state, events: events.map(eventValues), wakesNow, at, delivery });
  }

  async claimDeliveries(now: string, limit: number, leaseUntil: string): Promise<{ deliveries: DeliveryRecord[]; nextAt?: string }> {
    const op: WriteOp = { kind: 'claimOutbox', now, limit: this.db.limit(limit), leaseUntil, instance: this.instance };
    const { rows, nextAt } = await this.write<{ rows: OutboxRow[]; nextAt?: string }>(op);
    return nextAt == null ? { deliveries: rows.map(toDelivery) } : { deliveries: rows.map(toDelivery), nextAt };
  }

  ackPart(id: number, part: number): Promise<void> {
    return this.write({ kind: 'ackPart', id, part });
  }

  retryDelivery(id: number, at: string, error: string): Promise<void> {
    return this.write({ kind: 'retryDelivery', id, at, error });
  }

  settleDelivery(id: number, outcome: DeliveryOutcomeRecord, effects: SettleEffects): Promise<void> {
    return this.write({ kind: 'settleDelivery', id, outcome, effects });
  }

  /** Runs a call unless the store is closing; close() waits for the calls under way. */
  protected guard<T>(fn: () => Promise<T>): Promise<T> {
    if (this.state !== 'open') return Promise.reject(new StoreError('closed', 'the store is closed'));
    if (this.goneError) return Promise.reject(this.goneError);
    const p = fn();
    this.calls.add(p);
    const done = () => void this.calls.delete(p);
    p.then(done, done);
    return p;
  }

  /** Waits for the calls under way (see {@link guard}). */
  protected settled(): Promise<unknown> {
    return Promise.allSettled([...this.calls]);
  }

  protected read<T>(fn: () => Promise<T>): Promise<T> {
    return this.guard(() => fn().catch((err: unknown) => Promise.reject(this.db.storeError(err))));
  }

  /** Commits one op; resolves with its result once committed. */
  protected write<T = void>(op: WriteOp): Promise<T> {
    if (this.state !== 'open') return Promise.reject(new StoreError('closed', 'the store is closed'));
    return this.batcher.write<T>(op);
  }
}
