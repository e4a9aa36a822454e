import type { StoreError } from './store.js';
import type { BatchOutcome, WriteOp } from './writes.js';

/** Counters for benchmarks and specs (not part of the Store seam). */
export interface CommitStats {
  /** Transactions committed: one fsync each in SQLite's `fsync` mode. */
  commits: number;
  ops: number;
  largestBatch: number;
}

/** Most accepts per group commit unless a spec or benchmark says otherwise. */
const BATCH_MAX = 512;

export interface GroupCommitOptions {
  /** Commits a batch in one transaction: per-op outcomes, or a rejection that fails the whole batch. */
  commit: (ops: WriteOp[]) => Promise<BatchOutcome<StoreError>>;
  /** Most accepts (SQLite: write ops) per group commit: bounds one commit's latency and size. */
  batchMax?: number;
  onCommit?: (accepts: number) => void;
  /** While a batch is in flight (SQLite refs its writer thread only then). */
  onBusy?: (busy: boolean) => void;
}

interface Pending {
  op: WriteOp;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Group commit for both backends: writes that arrive while a batch is in flight share the next transaction, each resolving after its COMMIT. */
export function groupCommit(opts: GroupCommitOptions) {
  const waiting: Pending[] = [];
  const stats: CommitStats = { commits: 0, ops: 0, largestBatch: 0 };
  let inFlight = false;
  let scheduled = false;
  let broken: StoreError | undefined;
  const idlers: (() => void)[] = [];

  const notifyIdle = () => {
    if (inFlight || (waiting.length > 0 && !broken)) return;
    for (const resolve of idlers.splice(0)) resolve();
  };

  const settle = (batch: Pending[], outcome: BatchOutcome<StoreError>) => {
    stats.commits++;
    stats.ops += batch.length;
    stats.largestBatch = Math.max(stats.largestBatch, batch.length);
    const failed = outcome.failed && new Map(outcome.failed);
    batch.forEach((p, i) => {
      const err = failed?.get(i);
      if (err) p.reject(err);
      else p.resolve(outcome.values?.[i]);
    });
    // Commits of other ops only (claims, acks, purges) would crowd the histogram with zeros.
    const accepts = batch.filter((p) => p.op.kind === 'accept').length;
    if (accepts > 0) opts.onCommit?.(accepts);
  };

  const flush = () => {
    if (inFlight || waiting.length === 0 || broken) return;
    const batch = waiting.splice(0, opts.batchMax ?? BATCH_MAX);
    inFlight = true;
    opts.onBusy?.(true);
    opts.commit(batch.map((p) => p.op)).then(
      (outcome) => settle(batch, outcome),
      (err) => batch.forEach((p) => p.reject(err)),
    ).finally(() => {
      inFlight = false;
      flush(); // what arrived meanwhile already waited: it goes at once
      if (!inFlight) opts.onBusy?.(false);
      notifyIdle();
    });
  };

  return {
    stats,
    write<T>(op: WriteOp): Promise<T> {
      if (broken) return Promise.reject(broken);
      return new Promise<T>((resolve, reject) => {
        waiting.push({ op, resolve: resolve as (v: unknown) => void, reject });
        if (inFlight || scheduled) return;
        // The end of this turn of the event loop: everything accepted in it shares the commit.
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          flush();
        });
      });
    },
    /** Resolves once nothing is queued or in flight (or nothing more can be written). */
    idle: () => new Promise<void>((resolve) => {
      idlers.push(resolve);
      notifyIdle();
    }),
    /** From now on every queued and later write rejects with `err` (the writer is gone). */
    fail(err: StoreError): void {
      broken ??= err;
      for (const p of waiting.splice(0)) p.reject(broken);
      notifyIdle();
    },
    broken: () => broken,
  };
}

export type GroupCommit = ReturnType<typeof groupCommit>;
