/**
 * The store's writer thread: both sides of the thread boundary. It owns the only write
 * connection and runs each batch of write ops (sqlite-ops.ts) that `sqlite.ts` posts in ONE
 * transaction, so that one fsync covers every op in it (group commit), while the event loop
 * of the main thread never waits on the disk.
 *
 * `startWriter` (main thread) spawns it; it talks only through the messages typed below.
 * Prints nothing: failures go back to the main thread, which logs them.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from './sqlite-schema.js';
import { OpError, opHandlers, type WriteOp } from './sqlite-ops.js';
import { StoreError } from './store.js';

/**
 * An error made cloneable: `code` is SQLite's (`SQLITE_CONSTRAINT_UNIQUE`, …) or ours
 * ({@link STORE_GONE}, `run_not_running`, `constraint`).
 */
export interface WireError {
  message: string;
  code?: string;
}

/**
 * A committed batch's outcome: `values[i]` is op i's result where it has one (the array is
 * left out when none has: accepts, the bulk, return nothing), `failed` lists the ops that
 * failed alone while the rest committed. Both stay small so the reply is cheap to send.
 */
export interface BatchOutcome {
  values?: unknown[];
  failed?: [index: number, error: WireError][];
}

export type ToWriter =
  | { type: 'open'; file: string; durability: 'fsync' | 'os' }
  | { type: 'batch'; ops: WriteOp[] }
  | { type: 'close' };

export type FromWriter =
  | { type: 'ready' }
  | { type: 'fatal'; error: WireError }
  /** Either the outcome of a committed transaction, or one error (nothing committed). */
  | ({ type: 'batch'; error?: WireError; ms: number } & BatchOutcome)
  | { type: 'closed' };

/**
 * A batch's error code when the database file or its WAL is no longer the one the writer
 * opened: the batch committed into a removed (or replaced) file and must not be acknowledged.
 */
export const STORE_GONE = 'store_gone';


function toWire(err: unknown): WireError {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
  }
  return { message: String(err) };
}

// The thread runs this file. Built, its entry is dist/store/sqlite-writer.cjs, this file and
// what it imports as one CommonJS file (a thread boots faster from it: scripts/build.mjs). Run from
// the sources (the specs), it needs tsx, and Node 20 does not apply ESM loader hooks
// (`--import tsx`, `register()`) inside worker threads (nodejs/node#47747, privatenumber/tsx#354):
// so the thread starts from this tiny script, which installs tsx's in-thread require hook and
// loads this file. Only dynamic import() is used because the worker inherits the parent's
// flags, and with `--input-type=module` an eval-ed script is a module, where `require` does
// not exist.
const BOOT = `Promise.all([import('node:module'), import('node:worker_threads')]).then(([m, w]) => {
  const require = m.createRequire(w.workerData.entry);
  require(w.workerData.tsx).register();
  require(w.workerData.entry);
});`;
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const ENTRY = fileURLToPath(FROM_SOURCES ? import.meta.url : new URL('../store/sqlite-writer.cjs', import.meta.url));

/**
 * Spawns the writer thread and opens its connection. `onOpen` runs while the thread boots
 * (the caller opens its read connection and migrates then); the writer opens the file only
 * after it, so it never sees a half-migrated schema.
 */
export function startWriter(file: string, durability: 'fsync' | 'os', onOpen: () => void): Promise<Worker> {
  const worker = new Worker(FROM_SOURCES ? BOOT : ENTRY, {
    eval: FROM_SOURCES,
    workerData: {
      ...(FROM_SOURCES ? { tsx: createRequire(import.meta.url).resolve('tsx/cjs/api'), entry: ENTRY } : {}),
      hookrelayWriter: true,
    },
    // The writer allocates little and briefly (one batch at a time): a small young generation
    // keeps its resident memory down (V8 would grow it to 2 × 16 MiB under load).
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  return new Promise((resolve, reject) => {
    const stop = (err: unknown) => {
      worker.off('message', onMessage).off('exit', onExit).off('error', onError);
      worker.on('error', () => {}); // a late 'error' without a listener would be thrown here
      void worker.terminate();
      reject(err);
    };
    const unavailable = (why: string, cause?: unknown) =>
      stop(new StoreError('unavailable', `the store writer could not start: ${why}`, { cause }));
    const onMessage = (msg: FromWriter) => {
      if (msg.type === 'ready') {
        worker.off('message', onMessage).off('exit', onExit).off('error', onError);
        resolve(worker); // the store attaches its own listeners before any further event is delivered
      } else if (msg.type === 'fatal') unavailable(msg.error.message, msg.error);
    };
    const onError = (err: Error) => unavailable(err.message, err);
    const onExit = (code: number) => unavailable(`the thread exited with code ${code}`);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    try {
      onOpen(); // the caller migrates while the thread boots; messages wait in the port
      worker.postMessage({ type: 'open', file, durability });
    } catch (err) {
      stop(err); // e.g. a newer schema: the caller's error, as it is
    }
  });
}

/** Opens the write connection with the durability the config asks for. */
function openWriter(file: string, durability: 'fsync' | 'os') {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  // Already set by the main thread (WAL is persistent in the file); asserted here because
  // group commit relies on WAL's readers-beside-the-writer (https://www.sqlite.org/wal.html).
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (mode !== 'wal') throw new Error(`could not switch the database to WAL mode (got ${String(mode)})`);
  // WAL + FULL: the WAL is fsynced at every commit, so a commit survives power loss.
  // WAL + NORMAL: it is synced only at checkpoints — a commit survives a crash of this
  // process but may roll back on power loss (https://www.sqlite.org/pragma.html#pragma_synchronous).
  db.pragma(`synchronous = ${durability === 'fsync' ? 'FULL' : 'NORMAL'}`);
  // On macOS fsync() does not flush the drive's cache; F_FULLFSYNC does. No-op elsewhere.
  // https://www.sqlite.org/pragma.html#pragma_fullfsync
  const full = durability === 'fsync' ? 'ON' : 'OFF';
  db.pragma(`fullfsync = ${full}`);
  db.pragma(`checkpoint_fullfsync = ${full}`);
  // Truncate the WAL back to 64 MiB after checkpoints so one burst does not keep a huge file.
  db.pragma('journal_size_limit = 67108864');
  // SQLite's own default page cache (2 MiB), not better-sqlite3's 16 MiB: the writer appends
  // (time-ordered keys) and touches few pages per commit, and the pages it drops are in the
  // OS's cache; the 16 MiB filled up under load and stayed resident (measured: see
  // docs/performance.md).
  db.pragma('cache_size = -2000');
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== SCHEMA_VERSION) throw new Error(`expected schema v${SCHEMA_VERSION}, found v${version}`);
  return db;
}

/**
 * Builds the batch runner: the whole batch in ONE transaction (BEGIN IMMEDIATE … COMMIT, one
 * fsync). The common case runs the ops straight through. When an op fails, SQLite has rolled
 * the transaction back, and the batch runs again with each op in its own SAVEPOINT
 * (better-sqlite3 turns a nested transaction function into one), so the failing op is
 * reported alone and its batch-mates still commit. Savepoints on every op cost a large share of
 * the writer's time (measured: see docs/performance.md), so only the rare failing batch pays.
 */
function batchRunner(db: Database.Database) {
  const apply = opHandlers(db);
  const fast = db.transaction((ops: WriteOp[]): BatchOutcome => {
    const out: BatchOutcome = {};
    for (let i = 0; i < ops.length; i++) {
      const value = apply(ops[i]!);
      if (value !== undefined) (out.values ??= [])[i] = value;
    }
    return out;
  });
  const one = db.transaction((op: WriteOp) => apply(op));
  const isolated = db.transaction((ops: WriteOp[]): BatchOutcome => {
    const out: BatchOutcome = {};
    for (let i = 0; i < ops.length; i++) {
      try {
        const value = one(ops[i]!);
        if (value !== undefined) (out.values ??= [])[i] = value;
      } catch (err) {
        // Some errors (SQLITE_FULL, SQLITE_IOERR, …) make SQLite roll back the whole
        // transaction (https://www.sqlite.org/lang_transaction.html, "Response To Errors
        // Within A Transaction"): the rest would then run in autocommit, so fail the batch.
        if (!db.inTransaction) throw err;
        (out.failed ??= []).push([i, toWire(err)]);
      }
    }
    return out;
  });
  return (ops: WriteOp[]): BatchOutcome => {
    try {
      return fast.immediate(ops);
    } catch {
      return isolated.immediate(ops);
    }
  };
}

/**
 * The identity (device and inode) of the database file and of its WAL, as opened. SQLite
 * keeps writing through its open descriptors after a file is unlinked or renamed over, so a
 * removed `hookrelay.db` (or `-wal`) goes unnoticed by SQLite itself: every commit "succeeds"
 * into a file that is gone at the next start. Comparing with a stat() after each commit is
 * how the writer notices. Returns the check: undefined while both are in place, else what
 * changed, for the error.
 */
function identityCheck(file: string): () => string | undefined {
  const paths = [file, `${file}-wal`]; // the WAL exists: the read connection holds it open
  const opened = paths.map((p) => statSync(p));
  return () => {
    for (let i = 0; i < paths.length; i++) {
      const now = statSync(paths[i]!, { throwIfNoEntry: false });
      if (!now) return `${paths[i]} was removed`;
      if (now.ino !== opened[i]!.ino || now.dev !== opened[i]!.dev) return `${paths[i]} was replaced by another file`;
    }
    return undefined;
  };
}

function serve(port: NonNullable<typeof parentPort>): void {
  let db: Database.Database | undefined;
  let run: ((ops: WriteOp[]) => BatchOutcome) | undefined;
  let check: (() => string | undefined) | undefined;
  const send = (msg: FromWriter) => port.postMessage(msg);

  port.on('message', (msg: ToWriter) => {
    switch (msg.type) {
      case 'open':
        try {
          db = openWriter(msg.file, msg.durability);
          run = batchRunner(db);
          check = identityCheck(msg.file);
          send({ type: 'ready' });
        } catch (err) {
          send({ type: 'fatal', error: toWire(err) });
        }
        return;
      case 'batch': {
        const t0 = performance.now();
        try {
          if (!run) throw new Error('the store writer is not open');
          const outcome = run(msg.ops);
          // After COMMIT, before anyone is told: a commit into a removed file is not acknowledged
          // (and the main thread sends no batch after it hears of one).
          const gone = check?.();
          if (gone) throw new OpError(STORE_GONE, gone);
          send({ type: 'batch', ...outcome, ms: performance.now() - t0 });
        } catch (err) {
          send({ type: 'batch', error: toWire(err), ms: performance.now() - t0 });
        }
        return;
      }
      case 'close':
        try {
          db?.close();
        } finally {
          send({ type: 'closed' });
          port.close(); // nothing else keeps this thread alive: it exits
        }
        return;
    }
  });
}

// Only in the thread `startWriter` spawned: importing this file elsewhere (the main thread,
// or a store opened inside some other worker) must not take over that thread's port.
if (parentPort && (workerData as { hookrelayWriter?: boolean } | null)?.hookrelayWriter) serve(parentPort);
