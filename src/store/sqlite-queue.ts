/**
 * The main thread's half of the embedded store's group commit: write ops wait in a queue and go
 * to the writer thread (sqlite-writer.ts) in batches, each committed there in one transaction
 * — one fsync for up to `batchMax` ops — so that the event loop never blocks on the disk. While
 * a batch is in flight, new ops gather for the next. PostgreSQL's counterpart is
 * postgres-writer.ts (acceptBatcher).
 *
 * If the writer thread dies, queued and later writes reject with `unavailable`. If the
 * database file or its WAL is removed or replaced under the running store, the writer notices
 * after the next commit: that batch and every later call reject with `unavailable` until a
 * restart, and one error line says so. While commits fail, {@link WriteQueue.problem} says
 * why (commit-health.ts). An idle writer does not keep the process alive.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../log.js';
import { commitHealth, type CommitHealth } from './commit-health.js';
import type { WriteOp } from './sqlite-ops.js';
import { toStoreError } from './sqlite-reader.js';
import { STORE_GONE, type FromWriter, type WireError } from './sqlite-writer.js';
import { isStoreDown, StoreError } from './store.js';

const SLOW_COMMIT_MS = 1000;

/** Counters for benchmarks and specs (not part of the Store seam). */
export interface SqliteStoreStats {
  /** Transactions committed by the writer: one fsync each in `fsync` mode. */
  commits: number;
  /** Write ops that went through those commits (including ops that failed alone). */
  ops: number;
  largestBatch: number;
  /** Time the writer spent in transactions, BEGIN to COMMIT (fsync included). */
  commitMs: number;
  /**
   * open() time: spawning the writer thread until its connection is ready (the read
   * connection opens and migrates meanwhile).
   */
  writerStartMs: number;
}

/** The queue in front of the writer thread (see {@link startQueue}). */
export interface WriteQueue {
  /** Queues an op for the next batch; resolves with its result once its batch has committed. */
  write<T>(op: WriteOp): Promise<T>;
  /** Set once the database file is found removed or replaced: every store call rejects with it, reads too. */
  gone(): StoreError | undefined;
  /** Set once the writer thread has stopped by itself: writes reject with it. */
  broken(): StoreError | undefined;
  /** Why commits fail, while they do (CONTRACT.md §8): until one succeeds. */
  problem(): string | undefined;
  /** Resolves once nothing is queued or in flight (or nothing more can be written). */
  idle(): Promise<void>;
  /** Stops the writer thread (unless it already stopped): it closes its connection and exits. */
  stopWriter(): Promise<void>;
  stats(): SqliteStoreStats;
}

interface Pending {
  op: WriteOp;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** The queue's state, shared by the functions below. */
interface Queue {
  readonly worker: Worker;
  readonly log: Logger;
  readonly batchMax: number;
  readonly onCommit: ((accepts: number) => void) | undefined;
  readonly counters: SqliteStoreStats;
  readonly health: CommitHealth;
  readonly waiting: Pending[];
  inFlight: Pending[] | undefined;
  scheduled: boolean;
  idleWaiters: (() => void)[];
  writerError: StoreError | undefined;
  goneError: StoreError | undefined;
  lastWorkerError: Error | undefined;
  stopping: boolean;
}

/** Options of {@link startQueue}. */
export interface QueueOptions {
  log: Logger;
  batchMax: number;
  onCommit?: (accepts: number) => void;
  /** How long the writer took to start (reported in {@link SqliteStoreStats}). */
  writerStartMs: number;
}

/** Puts a queue in front of a started writer thread (sqlite-writer.ts startWriter). */
export function startQueue(worker: Worker, opts: QueueOptions): WriteQueue {
  const q: Queue = {
    worker, log: opts.log, batchMax: opts.batchMax, onCommit: opts.onCommit,
    counters: { commits: 0, ops: 0, largestBatch: 0, commitMs: 0, writerStartMs: opts.writerStartMs }, health: commitHealth(opts.log),
    waiting: [], inFlight: undefined, scheduled: false, idleWaiters: [],
    writerError: undefined, goneError: undefined, lastWorkerError: undefined, stopping: false,
  };
  worker.on('message', (msg: FromWriter) => onReply(q, msg));
  worker.on('error', (err) => (q.lastWorkerError = err));
  worker.on('exit', (code) => onExit(q, code));
  worker.unref(); // referenced only while a batch is in flight
  return {
    write: <T>(op: WriteOp) => enqueue<T>(q, op),
    gone: () => q.goneError,
    broken: () => q.writerError,
    // Gone and stopped last until a restart, and have said so in their own one line.
    problem: () => (q.goneError ? 'the database file is no longer the one opened; restart hookrelay'
      : q.writerError ? 'the store writer stopped; restart hookrelay' : q.health.problem()),
    idle: () => new Promise<void>((resolve) => {
      q.idleWaiters.push(resolve);
      notifyIdle(q);
    }),
    stopWriter: () => (q.writerError ? Promise.resolve() : stopWriter(q)),
    stats: () => ({ ...q.counters }),
  };
}

function enqueue<T>(q: Queue, op: WriteOp): Promise<T> {
  if (q.goneError) return Promise.reject(q.goneError);
  if (q.writerError) return Promise.reject(q.writerError);
  return new Promise<T>((resolve, reject) => {
    q.waiting.push({ op, resolve: resolve as (v: unknown) => void, reject });
    if (!q.inFlight && !q.scheduled) {
      // Wait for the end of this turn of the event loop, so that everything accepted in
      // it (e.g. several requests parsed in one poll phase) shares the commit.
      q.scheduled = true;
      setImmediate(() => {
        q.scheduled = false;
        flush(q);
      });
    }
  });
}

/** Sends the next batch to the writer, unless one is in flight. */
function flush(q: Queue): void {
  if (q.inFlight || q.waiting.length === 0 || q.writerError || q.goneError) return;
  const batch = q.waiting.splice(0, q.batchMax);
  // Built by push, not map: V8's optimized map makes a holey array, which the structured
  // clone writes and reads back element by element as a sparse one.
  const ops: WriteOp[] = [];
  for (const p of batch) ops.push(p.op);
  try {
    q.worker.postMessage({ type: 'batch', ops });
  } catch (err) {
    // DataCloneError: some op holds a value that cannot cross threads (a function, …).
    // Reject just those and send the rest; this path costs a clone per op, so only here.
    const sendable = batch.filter((p) => {
      try {
        structuredClone(p.op);
        return true;
      } catch {
        p.reject(new StoreError('failed', `a value cannot be stored: ${(err as Error).message}`, { cause: err }));
        return false;
      }
    });
    q.waiting.unshift(...sendable);
    if (sendable.length < batch.length) flush(q);
    else {
      const e = new StoreError('unavailable', `cannot reach the store writer: ${(err as Error).message}`, { cause: err });
      for (const p of q.waiting.splice(0, batch.length)) p.reject(e);
    }
    return;
  }
  q.inFlight = batch;
  q.worker.ref();
}

/** The writer's answer to the batch in flight: settles each op of it, then sends what waited meanwhile. */
function onReply(q: Queue, msg: FromWriter): void {
  if (msg.type !== 'batch' || !q.inFlight) return;
  const batch = q.inFlight;
  q.inFlight = undefined;
  if (!msg.error) {
    q.counters.commits++;
    q.counters.ops += batch.length;
    q.counters.largestBatch = Math.max(q.counters.largestBatch, batch.length);
    const failed = msg.failed && new Map(msg.failed);
    let accepts = 0;
    let down: [StoreError, WireError] | undefined;
    for (let i = 0; i < batch.length; i++) {
      const error = failed?.get(i);
      if (batch[i]!.op.kind === 'accept') accepts++;
      if (!error) batch[i]!.resolve(msg.values?.[i]);
      else {
        const err = toStoreError(error);
        if (isStoreDown(err)) down = [err, error];
        batch[i]!.reject(err);
      }
    }
    if (down) q.health.failed(down[0], sqliteProblem(down[1]));
    else q.health.committed();
    // Commits of other ops only (claims, acks, purges) would crowd the histogram with zeros.
    if (accepts > 0) q.onCommit?.(accepts);
  } else if (msg.error.code === STORE_GONE) {
    storeGone(q, msg.error.message, batch);
  } else {
    // The whole batch is rolled back; the store's health says so (not once per batch).
    const err = toStoreError(msg.error, 'unavailable');
    q.health.failed(err, sqliteProblem(msg.error));
    for (const p of batch) p.reject(err);
  }
  q.counters.commitMs += msg.ms;
  if (msg.ms > SLOW_COMMIT_MS) q.log.warn({ ms: Math.round(msg.ms), ops: batch.length }, 'slow store commit');
  // Ops that arrived while this batch was in flight go at once: they already waited.
  flush(q);
  if (!q.inFlight) q.worker.unref();
  notifyIdle(q);
}

/**
 * The database file (or its WAL) is not the one opened: what was committed since went into
 * a removed file. Fails the batch, the queue and every later call; says so once.
 */
function storeGone(q: Queue, what: string, batch: Pending[]): void {
  q.goneError = new StoreError(
    'unavailable',
    `${what} while the store was open; nothing more is stored until hookrelay is restarted`,
  );
  q.log.error(
    { what },
    'store database file removed or replaced under the running server: requests that need the store get 503 from now on; stop hookrelay, put the file back from a backup if you have one, and start it again (a start without it creates an empty store)',
  );
  for (const p of [...batch, ...q.waiting.splice(0)]) p.reject(q.goneError);
}

/**
 * A commit's failure as the senders and /healthz may read it: its cause in words, without
 * paths or payload text (SQLite's result codes: https://www.sqlite.org/rescode.html).
 */
function sqliteProblem(e: WireError): string {
  const code = e.code ?? '';
  if (code.startsWith('SQLITE_FULL')) return "no space left on the data directory's disk";
  if (code.startsWith('SQLITE_READONLY')) return 'the data directory cannot be written (read-only)';
  if (code.startsWith('SQLITE_IOERR')) return "the data directory's disk failed a write (I/O error)";
  return `the database cannot be written (${code || 'unknown error'})`;
}

function onExit(q: Queue, code: number): void {
  if (q.stopping) return;
  const why = q.lastWorkerError ? `: ${q.lastWorkerError.message}` : '';
  q.writerError = new StoreError('unavailable', `the store writer thread stopped (exit code ${code})${why}`, {
    cause: q.lastWorkerError,
  });
  q.log.error({ err: q.lastWorkerError, code }, 'store writer thread stopped; writes are unavailable');
  const lost = [...(q.inFlight ?? []), ...q.waiting.splice(0)];
  q.inFlight = undefined;
  for (const p of lost) p.reject(q.writerError);
  notifyIdle(q);
}

function notifyIdle(q: Queue): void {
  if (q.inFlight || (q.waiting.length > 0 && !q.writerError && !q.goneError)) return;
  const waiters = q.idleWaiters.splice(0);
  for (const w of waiters) w();
}

function stopWriter(q: Queue): Promise<void> {
  return new Promise((resolve) => {
    q.stopping = true;
    const timer = setTimeout(() => {
      q.log.warn('store writer did not stop within 10 s; terminating it');
      void q.worker.terminate();
    }, 10_000).unref();
    q.worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    q.worker.ref();
    q.worker.postMessage({ type: 'close' });
  });
}
