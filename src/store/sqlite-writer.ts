/** The embedded store's writer thread, both sides: it owns the only write connection and runs each batch (writes.ts) in one transaction. */
import { statSync } from 'node:fs';
import { Worker, parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import type { WireError } from './db-errors.js';
import { sqliteDb, type Db } from './dialect.js';
import { SCHEMA_VERSION } from './sqlite-schema.js';
import { StoreError } from './store.js';
import { runBatch, type BatchOutcome, type WriteOp } from './writes.js';

/** The writer connection's settings, read back from SQLite (https://www.sqlite.org/pragma.html). */
export interface WriterPragmas {
  journalMode: string;
  synchronous: number;
  fullfsync: number;
  userVersion: number;
  cacheSize: number;
}

type ToWriter = { type: 'open'; file: string; durability: 'fsync' | 'os' } | { type: 'batch'; ops: WriteOp[] } | { type: 'inspect' } | { type: 'giveBack'; pages: number } | { type: 'close' };

export type BatchReply = { type: 'batch'; error?: WireError; ms: number } & BatchOutcome<WireError>;
type FromWriter = { type: 'ready' } | { type: 'fatal'; error: WireError } | BatchReply | { type: 'inspect'; pragmas: WriterPragmas } | { type: 'giveBack'; left: number; error?: WireError };

/** A batch's error code when the database file or its WAL is no longer the one opened: its commit went into a removed file. */
export const STORE_GONE = 'store_gone';

function toWire(err: unknown): WireError {
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === 'string' ? { message, code } : { message };
}

// From the sources too (under tsx: the specs, which build first, spec/support/build-first.ts) the thread
// runs the build, dist/store/sqlite-writer.cjs (scripts/build.mjs), without the parent's `--import tsx`.
const ENTRY = new URL(import.meta.url.endsWith('.ts') ? '../../dist/store/sqlite-writer.cjs' : '../store/sqlite-writer.cjs', import.meta.url);

export interface Writer {
  readonly worker: Worker;
  batch(ops: WriteOp[]): Promise<BatchReply>;
  inspect(): Promise<WriterPragmas>;
  /** Gives up to `pages` free pages back to the file system, between batches; resolves with how many are left. */
  giveBack(pages: number): Promise<number>;
  /** Every request in flight rejects with `err` (the thread is gone). */
  abandon(err: unknown): void;
}

/** Spawns the writer; `onOpen` (the caller's migration) runs while it boots, before it opens the file. */
export async function startWriter(file: string, durability: 'fsync' | 'os', onOpen: () => void): Promise<Writer> {
  const worker = new Worker(ENTRY, {
    workerData: { hookrelayWriter: true },
    execArgv: [],
    // One batch at a time: a small young generation keeps the thread's resident memory down.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  const waiting: { resolve: (msg: FromWriter) => void; reject: (err: unknown) => void }[] = [];
  const ask = <T extends FromWriter>(msg: ToWriter) => new Promise<T>((resolve, reject) => {
    worker.postMessage(msg);
    waiting.push({ resolve: resolve as (m: FromWriter) => void, reject });
  });
  const writer: Writer = {
    worker,
    batch: (ops) => ask<BatchReply>({ type: 'batch', ops }),
    inspect: async () => (await ask<{ type: 'inspect'; pragmas: WriterPragmas }>({ type: 'inspect' })).pragmas,
    giveBack: async (pages) => {
      const reply = await ask<{ type: 'giveBack'; left: number; error?: WireError }>({ type: 'giveBack', pages });
      if (reply.error) throw new StoreError('failed', `giving freed pages back failed: ${reply.error.message}`);
      return reply.left;
    },
    abandon: (err) => waiting.splice(0).forEach((w) => w.reject(err)),
  };
  worker.on('message', (reply: FromWriter) => waiting.shift()?.resolve(reply));
  const unavailable = (why: string, cause?: unknown) => new StoreError('unavailable', `the store writer could not start: ${why}`, { cause });
  const onError = (err: Error) => writer.abandon(unavailable(err.message, err));
  const onExit = (code: number) => writer.abandon(unavailable(`the thread exited with code ${code}`));
  worker.on('error', onError).on('exit', onExit);
  try {
    onOpen(); // e.g. a newer schema: the caller's error, as it is
    const reply = await ask({ type: 'open', file, durability });
    if (reply.type === 'fatal') throw unavailable(reply.error.message, reply.error);
    return writer;
  } catch (err) {
    worker.on('error', () => {}); // a late 'error' without a listener would be thrown here
    void worker.terminate();
    throw err;
  } finally {
    worker.off('error', onError).off('exit', onExit);
  }
}

/** Opens the write connection with the durability the config asks for (https://www.sqlite.org/pragma.html). */
function openWriter(file: string, durability: 'fsync' | 'os') {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  // Group commit relies on WAL's readers beside the writer (https://www.sqlite.org/wal.html).
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (mode !== 'wal') throw new Error(`could not switch the database to WAL mode (got ${String(mode)})`);
  // WAL + FULL: a commit survives power loss; WAL + NORMAL: a crash of this process only.
  db.pragma(`synchronous = ${durability === 'fsync' ? 'FULL' : 'NORMAL'}`);
  // macOS's fsync() does not flush the drive's cache; F_FULLFSYNC does. No-op elsewhere.
  const full = durability === 'fsync' ? 'ON' : 'OFF';
  db.pragma(`fullfsync = ${full}`);
  db.pragma(`checkpoint_fullfsync = ${full}`);
  db.pragma('journal_size_limit = 67108864');
  // SQLite's default page cache, not better-sqlite3's 16 MiB: the writer appends and touches few pages.
  db.pragma('cache_size = -2000');
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== SCHEMA_VERSION) throw new Error(`expected schema v${SCHEMA_VERSION}, found v${version}`);
  return db;
}

/** SQLite writes on through its descriptors after its file is removed or replaced: compare device and inode after each commit. */
function identityCheck(file: string): () => string | undefined {
  const paths = [file, `${file}-wal`];
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
  let sdb: Db | undefined;
  let check: (() => string | undefined) | undefined;
  const send = (msg: FromWriter) => port.postMessage(msg);
  const handle = async (msg: ToWriter) => {
    switch (msg.type) {
      case 'open':
        try {
          db = openWriter(msg.file, msg.durability);
          sdb = sqliteDb(db);
          check = identityCheck(msg.file);
          send({ type: 'ready' });
        } catch (err) {
          send({ type: 'fatal', error: toWire(err) });
        }
        return;
      case 'batch': {
        const t0 = performance.now();
        try {
          const { values, failed } = await runBatch(sdb!, msg.ops);
          // After COMMIT, before anyone is told: a commit into a removed file is not acknowledged.
          const gone = check!();
          if (gone) throw Object.assign(new Error(gone), { code: STORE_GONE });
          const reply: BatchReply = { type: 'batch', ms: performance.now() - t0 };
          if (values) reply.values = values;
          if (failed) reply.failed = failed.map(([i, e]) => [i, toWire(e)]);
          send(reply);
        } catch (err) {
          send({ type: 'batch', error: toWire(err), ms: performance.now() - t0 });
        }
        return;
      }
      case 'inspect': {
        const p = (name: string) => db!.pragma(name, { simple: true });
        send({ type: 'inspect', pragmas: { journalMode: p('journal_mode'), synchronous: p('synchronous'), fullfsync: p('fullfsync'), userVersion: p('user_version'), cacheSize: p('cache_size') } as WriterPragmas });
        return;
      }
      case 'giveBack':
        try {
          // A database made without auto_vacuum = INCREMENTAL keeps its free pages (docs/reliability.md: `hookrelay store vacuum`).
          if (db!.pragma('auto_vacuum', { simple: true }) !== 2) return send({ type: 'giveBack', left: 0 });
          // Each step of the statement frees one page: exec runs it to its end (https://www.sqlite.org/pragma.html#pragma_incremental_vacuum).
          db!.exec(`PRAGMA incremental_vacuum(${Math.floor(msg.pages)})`);
          const left = db!.pragma('freelist_count', { simple: true }) as number;
          // The file shrinks once the checkpoint has copied the moved pages back into it.
          if (left === 0) db!.pragma('wal_checkpoint(PASSIVE)');
          send({ type: 'giveBack', left });
        } catch (err) {
          send({ type: 'giveBack', left: 0, error: toWire(err) });
        }
        return;
      case 'close':
        db?.close();
        port.close(); // nothing else keeps this thread alive: it exits
    }
  };
  let turn = Promise.resolve();
  port.on('message', (msg: ToWriter) => (turn = turn.then(() => handle(msg))));
}

// Only in the thread startWriter spawned: a store opened in some other worker must not take over that thread's port.
if (parentPort && (workerData as { hookrelayWriter?: boolean } | null)?.hookrelayWriter) serve(parentPort);
