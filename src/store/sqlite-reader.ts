/**
 * The embedded store's reader thread, both sides: the reads of the admin API, the console,
 * /metrics and the dispatcher run here on a connection of their own, so that a long one never
 * holds up the event loop that accepts requests (better-sqlite3 runs a statement synchronously).
 */
import { Worker, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { WireError } from './db-errors.js';
import { sqliteDb, type Db, type Sql } from './dialect.js';
import { StoreError } from './store.js';

type ToReader = { id: number; sql: Sql; params: readonly unknown[]; one: boolean } | { id: number; close: true };
type FromReader = { id: number; rows?: unknown; error?: WireError };

// As the writer's (sqlite-writer.ts): the thread runs the build, dist/store/sqlite-reader.cjs (scripts/build.mjs).
const ENTRY = new URL(import.meta.url.endsWith('.ts') ? '../../dist/store/sqlite-reader.cjs' : '../store/sqlite-reader.cjs', import.meta.url);

/** The reader thread as a {@link Db} that only reads (`all`, `get`); `close` ends the thread. */
export type ReaderDb = Db & { close(): Promise<void> };

/** Starts the thread on `file` (WAL: it sees each commit acknowledged before a read is sent). */
export function startReader(file: string, base: Db): ReaderDb {
  const worker = new Worker(ENTRY, { workerData: { hookrelayReader: file }, execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let next = 0;
  let gone: StoreError | undefined;
  const fail = (err: StoreError) => {
    gone ??= err;
    for (const w of waiting.values()) w.reject(gone);
    waiting.clear();
  };
  worker.on('message', (m: FromReader) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (waiting.size === 0) worker.unref();
    if (m.error) w?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else w?.resolve(m.rows);
  });
  worker.on('error', (err) => fail(new StoreError('unavailable', `the store reader thread failed: ${err.message}`, { cause: err })));
  worker.on('exit', (code) => fail(new StoreError('closed', `the store reader thread stopped (exit code ${code})`)));
  worker.unref(); // referenced only while a read is in flight
  const ask = <T>(msg: { sql: Sql; params: readonly unknown[]; one: boolean }) => new Promise<T>((resolve, reject) => {
    if (gone) return reject(gone);
    const id = next++;
    waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    worker.ref();
    worker.postMessage({ id, ...msg });
  });
  const readOnly = () => Promise.reject(new StoreError('failed', 'the store reader thread only reads'));
  return {
    ...base,
    all: (sql, params = []) => ask({ sql, params, one: false }),
    get: (sql, params = []) => ask({ sql, params, one: true }),
    run: readOnly,
    insert: readOnly,
    transaction: readOnly,
    close: async () => {
      if (gone) return;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.ref();
      worker.postMessage({ id: -1, close: true } satisfies ToReader);
      await exited;
    },
  };
}

function serve(port: NonNullable<typeof parentPort>, file: string): void {
  const conn = new Database(file, { fileMustExist: true });
  conn.pragma('query_only = ON');
  conn.pragma('busy_timeout = 5000');
  const db = sqliteDb(conn);
  port.on('message', (msg: ToReader) => {
    if ('close' in msg) {
      conn.close();
      port.close();
      return;
    }
    // better-sqlite3 answers synchronously: each message is one statement, in order.
    (msg.one ? db.get(msg.sql, msg.params) : db.all(msg.sql, msg.params)).then(
      (rows) => port.postMessage({ id: msg.id, rows } satisfies FromReader),
      (err: { message?: string; code?: unknown }) => port.postMessage({ id: msg.id, error: { message: String(err?.message ?? err), ...(typeof err?.code === 'string' ? { code: err.code } : {}) } } satisfies FromReader),
    );
  });
}

// Only in the thread startReader spawned.
const mine = (workerData as { hookrelayReader?: string } | null)?.hookrelayReader;
if (parentPort && typeof mine === 'string') serve(parentPort, mine);
