/**
 * The store's writer thread: both sides of the thread boundary. It owns the only write
 * connection and runs each batch of write ops that `sqlite.ts` posts in ONE transaction, so
 * that one fsync covers every op in it (group commit), while the event loop of the main
 * thread never waits on the disk.
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
import {
  EVENT_COLUMNS, KEY_COLUMNS, OUTBOX_COLUMNS, RUN_COLUMNS, SCHEMA_VERSION, eventValues, outboxValues, type Bind, type OutboxRow, type RunRow,
} from './sqlite-schema.js';
import { REQUEST_COLUMNS } from './request-rows.js';
import { StoreError, type DeliveryOutcomeRecord, type HistoryMessage, type NewDelivery, type RunEffects, type RunEnd, type SettleEffects } from './store.js';

/**
 * One write, as the main thread queues it. Accepted events and runs travel as their INSERT's
 * bind values (`eventValues`, `runValues`): an array crosses the thread boundary faster than
 * an object, whose every key is serialized too, and accepts are most of the traffic.
 */
export type WriteOp =
  | { kind: 'accept'; events: Bind[][]; runs: Bind[][]; keys?: KeyOp[]; expiredBefore?: string; forwards?: ForwardOp[]; request?: Bind[] }
  | { kind: 'requests'; rows: Bind[][] }
  | { kind: 'purgeRequests'; before: string; after: number; max: number }
  | { kind: 'purgeBodies'; now: string; max: number }
  | { kind: 'claim'; limit: number; startedAt: string }
  | { kind: 'finish'; runId: string; end: RunEnd; effects: RunEffects; at: string }
  | { kind: 'requeue'; runIds: string[] }
  | { kind: 'append'; sessionKey: string; messages: HistoryMessage[]; state?: Record<string, string>; events: Bind[][]; at: string; delivery?: NewDelivery }
  | { kind: 'claimOutbox'; now: string; limit: number; leaseUntil: string }
  | { kind: 'ackPart'; id: number; part: number }
  | { kind: 'retryDelivery'; id: number; at: string; error: string }
  | { kind: 'settleDelivery'; id: number; outcome: DeliveryOutcomeRecord; effects: SettleEffects }
  | { kind: 'purge'; table: PurgeTable; before: string; after: number; max: number }
  | { kind: 'purgeKeys'; before: string; max: number }
  | { kind: 'inspect' };

/** An idempotency key in an accept: its INSERT's values and the ids of the rows it guards. */
export interface KeyOp {
  values: Bind[];
  events: string[];
  runs: string[];
}

/** A forward row in an accept: the id of the event or run it carries, and its INSERT's values. */
export type ForwardOp = [key: string, values: Bind[]];

/** What retention purges, one table per op (sqlite.ts walks them in turn). */
export type PurgeTable = 'runs' | 'events' | 'history' | 'outbox';

/**
 * One purge op's outcome: rows deleted, and where the next op resumes (`next`: the last seq
 * looked at), or undefined when the table holds nothing more that is old enough.
 */
export interface PurgeStep {
  deleted: number;
  next?: number;
}

/** What `inspect` returns: the writer connection's settings, read back from SQLite. */
export interface WriterPragmas {
  journalMode: string;
  /** 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA (https://www.sqlite.org/pragma.html#pragma_synchronous). */
  synchronous: number;
  fullfsync: number;
  userVersion: number;
}

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

class OpError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

function toWire(err: unknown): WireError {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
  }
  return { message: String(err) };
}

// Node 20 does not apply ESM loader hooks (`--import tsx`, `register()`) inside worker
// threads (nodejs/node#47747, privatenumber/tsx#354). So the thread starts from this tiny
// script, which installs tsx's in-thread require hook and loads this file: 80-150 ms
// measured, about half of what tsx's ESM hooks cost (they start one more thread). Only
// dynamic import() is used because the worker inherits the parent's flags, and with
// `--input-type=module` an eval-ed script is a module, where `require` does not exist.
const BOOT = `Promise.all([import('node:module'), import('node:worker_threads')]).then(([m, w]) => {
  const require = m.createRequire(w.workerData.entry);
  require(w.workerData.tsx).register();
  require(w.workerData.entry);
});`;

/**
 * Spawns the writer thread and opens its connection. `onOpen` runs while the thread boots
 * (the caller opens its read connection and migrates then); the writer opens the file only
 * after it, so it never sees a half-migrated schema.
 */
export function startWriter(file: string, durability: 'fsync' | 'os', onOpen: () => void): Promise<Worker> {
  const worker = new Worker(BOOT, {
    eval: true,
    workerData: {
      tsx: createRequire(import.meta.url).resolve('tsx/cjs/api'),
      entry: fileURLToPath(import.meta.url),
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
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== SCHEMA_VERSION) throw new Error(`expected schema v${SCHEMA_VERSION}, found v${version}`);
  return db;
}

/**
 * The op handlers, over statements prepared once. Each runs inside a SAVEPOINT. The INSERTs of
 * rows.ts values get them spread as arguments: better-sqlite3 reads an array argument's
 * elements through V8's slow element lookup, arguments directly (0.4 µs less for a request row).
 */
function handlers(db: Database.Database) {
  const insertEvent = db.prepare(`INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`);
  const insertRun = db.prepare(
    `INSERT INTO runs (status, ${RUN_COLUMNS}) VALUES ('queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // The oldest claimable heads (the `ready` table, kept by triggers: sqlite-schema.ts v2). The
  // IN list is computed before the UPDATE runs, so the triggers' changes to `ready` do not
  // disturb it. One statement, and the writer is the only one writing, so two claims never
  // overlap.
  const claim = db.prepare<{ limit: number; started_at: string }, RunRow>(`
    UPDATE runs SET status = 'running', started_at = @started_at
    WHERE seq IN (SELECT seq FROM ready ORDER BY seq LIMIT @limit)
    RETURNING *`);
  const finish = db.prepare<Record<string, string | null>, { session_key: string }>(`
    UPDATE runs SET status = @status, ended_at = @ended_at, reply = @reply, error = @error, error_code = @error_code,
      delivered_to = @delivered_to
    WHERE run_id = @run_id AND status = 'running'
    RETURNING session_key`);
  const requeue = db.prepare("UPDATE runs SET status = 'queued', started_at = NULL WHERE run_id = ? AND status = 'running'");
  const insertHistory = db.prepare('INSERT INTO history (session_key, role, content, at) VALUES (?, ?, ?, ?)');
  // A key already held is no error: the request that brings it again is answered with the
  // first answer, and the batch it shares must commit (changes tells which happened). An
  // expired key that the purge has not reached yet is taken over.
  const claimKey = db.prepare(
    `INSERT INTO idempotency (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET
      request_hash = excluded.request_hash, status = excluded.status, body = excluded.body, at = excluded.at
    WHERE idempotency.at < ?`,
  );
  const purgeKeys = db.prepare('DELETE FROM idempotency WHERE key IN (SELECT key FROM idempotency WHERE at < ? ORDER BY at LIMIT ?)');
  const setState = db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const insertOutbox = db.prepare(`INSERT INTO outbox (status, ${OUTBOX_COLUMNS}) VALUES ('pending', ?, ?, ?, ?, ?, ?, ?)`);
  // The partial index outbox_due holds exactly the pending rows, in due order.
  const claimOutbox = db.prepare<{ now: string; limit: number; lease: string }, OutboxRow>(`
    UPDATE outbox SET attempts = attempts + 1, lease_until = @lease
    WHERE id IN (
      SELECT id FROM outbox WHERE status = 'pending' AND next_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY next_at LIMIT @limit)
    RETURNING *`);
  // When the next pending row can be claimed: its due time, or its lease's end if later.
  const nextDue = db.prepare<[], { at: string | null }>(
    "SELECT MIN(MAX(next_at, IFNULL(lease_until, ''))) AS at FROM outbox WHERE status = 'pending'",
  );
  const ackPart = db.prepare("UPDATE outbox SET parts_sent = MAX(parts_sent, @part + 1) WHERE id = @id AND status = 'pending' AND parts > @part");
  const retryDelivery = db.prepare("UPDATE outbox SET next_at = @at, error = @error, lease_until = NULL WHERE id = @id AND status = 'pending'");
  const settleDelivery = db.prepare<Record<string, string | number | null>, { run_id: string | null }>(`
    UPDATE outbox SET status = @status, error = @error, settled_at = @at, lease_until = NULL
    WHERE id = @id AND status = 'pending'
    RETURNING run_id`);
  // A forward row also ends its (queued) run: status, ended_at and forwarded.
  const settleRun = db.prepare(`
    UPDATE runs SET delivered_to = IFNULL(@delivered_to, delivered_to), error = IFNULL(@error, error),
      error_code = IFNULL(@error_code, error_code), status = IFNULL(@status, status), ended_at = IFNULL(@ended_at, ended_at),
      forwarded = IFNULL(@forwarded, forwarded)
    WHERE run_id = @run_id`);

  const insertRequest = db.prepare(`INSERT INTO requests (${REQUEST_COLUMNS}) VALUES (${REQUEST_COLUMNS.split(',').map(() => '?').join(', ')})`);
  // Retention of the request log, like the other tables' (purgeSteps): a walk in seq order
  // that stops at the first row too young. Bodies by their own time, through the partial index.
  const requestWindow = db.prepare<[number, number], { seq: number; t: string }>('SELECT seq, at AS t FROM requests WHERE seq > ? ORDER BY seq LIMIT ?');
  const removeRequest = db.prepare('DELETE FROM requests WHERE seq = ?');
  const purgeBodies = db.prepare(
    'UPDATE requests SET body = NULL, body_until = NULL WHERE seq IN (SELECT seq FROM requests WHERE body_until <= ? ORDER BY body_until LIMIT ?)',
  );

  const appendHistory = (sessionKey: string, messages: readonly HistoryMessage[], at: string) => {
    for (const m of messages) insertHistory.run(sessionKey, m.role, m.content, at);
  };
  const purge = purgeSteps(db);

  return (op: WriteOp): unknown => {
    switch (op.kind) {
      case 'accept': {
        if (!op.keys) {
          for (const e of op.events) insertEvent.run(...e);
          for (const r of op.runs) insertRun.run(...r);
          if (op.forwards) for (const [, f] of op.forwards) insertOutbox.run(...f);
          if (op.request) insertRequest.run(...op.request);
          return undefined;
        }
        let held: number[] | undefined;
        let skip: Set<string> | undefined;
        for (let i = 0; i < op.keys.length; i++) {
          const k = op.keys[i]!;
          if (claimKey.run(...k.values, op.expiredBefore ?? '').changes > 0) continue;
          (held ??= []).push(i);
          skip ??= new Set();
          for (const id of k.events) skip.add(id);
          for (const id of k.runs) skip.add(id);
        }
        for (const e of op.events) if (!skip?.has(e[0] as string)) insertEvent.run(...e);
        for (const r of op.runs) if (!skip?.has(r[0] as string)) insertRun.run(...r);
        if (op.forwards) for (const [key, f] of op.forwards) if (!skip?.has(key)) insertOutbox.run(...f);
        // A request answered as a replay of the first (a key held) is logged as such by its caller.
        if (op.request && !held) insertRequest.run(...op.request);
        return held;
      }
      case 'requests':
        for (const r of op.rows) insertRequest.run(...r);
        return undefined;
      case 'purgeRequests': {
        const rows = requestWindow.all(op.after, op.max);
        let deleted = 0;
        for (const row of rows) {
          if (row.t >= op.before) return { deleted } satisfies PurgeStep;
          deleted += removeRequest.run(row.seq).changes;
        }
        return (rows.length < op.max ? { deleted } : { deleted, next: rows[rows.length - 1]!.seq }) satisfies PurgeStep;
      }
      case 'purgeBodies':
        return purgeBodies.run(op.now, op.max).changes;
      case 'purgeKeys':
        return purgeKeys.run(op.before, op.max).changes;
      case 'claim':
        // RETURNING gives rows in no defined order (https://www.sqlite.org/lang_returning.html).
        return claim.all({ limit: op.limit, started_at: op.startedAt }).sort((a, b) => a.seq - b.seq);
      case 'finish': {
        const { end } = op;
        if (!['succeeded', 'failed', 'timed_out'].includes(end.status)) {
          throw new OpError('constraint', `a run cannot end with status ${String(end.status)}`);
        }
        const row = finish.get({
          run_id: op.runId,
          status: end.status,
          ended_at: end.endedAt,
          reply: end.reply ?? null,
          error: end.error ?? null,
          error_code: end.errorCode ?? null,
          delivered_to: end.deliveredTo ?? null,
        });
        if (!row) throw new OpError('run_not_running', `run ${op.runId} is not running`);
        if (op.effects.summary) insertEvent.run(...eventValues(op.effects.summary));
        if (op.effects.delivery) insertOutbox.run(...outboxValues(op.effects.delivery, op.runId));
        appendHistory(row.session_key, op.effects.history ?? [], op.at);
        return undefined;
      }
      case 'requeue':
        for (const id of op.runIds) requeue.run(id);
        return undefined;
      case 'append':
        appendHistory(op.sessionKey, op.messages, op.at);
        for (const [key, value] of Object.entries(op.state ?? {})) setState.run(key, value);
        for (const e of op.events) insertEvent.run(...e);
        if (op.delivery) insertOutbox.run(...outboxValues(op.delivery, null));
        return undefined;
      case 'claimOutbox': {
        const rows = claimOutbox.all({ now: op.now, limit: op.limit, lease: op.leaseUntil }).sort((a, b) => a.next_at.localeCompare(b.next_at) || a.id - b.id);
        return { rows, nextAt: nextDue.get()?.at ?? undefined };
      }
      case 'ackPart':
        ackPart.run({ id: op.id, part: op.part });
        return undefined;
      case 'retryDelivery':
        retryDelivery.run({ id: op.id, at: op.at, error: op.error });
        return undefined;
      case 'settleDelivery': {
        const { outcome, effects } = op;
        const row = settleDelivery.get({
          id: op.id,
          status: outcome.status,
          error: outcome.status === 'failed' ? outcome.error : null,
          at: outcome.at,
        });
        if (!row) throw new OpError('constraint', `delivery ${op.id} is not pending`);
        if (row.run_id !== null && effects.run) {
          settleRun.run({
            run_id: row.run_id,
            delivered_to: effects.run.deliveredTo ?? null,
            error: effects.run.error ?? null,
            error_code: effects.run.errorCode ?? null,
            status: effects.run.status ?? null,
            ended_at: effects.run.endedAt ?? null,
            forwarded: effects.run.forwarded ? JSON.stringify(effects.run.forwarded) : null,
          });
        }
        if (effects.summary) insertEvent.run(...eventValues(effects.summary));
        for (const [key, value] of Object.entries(effects.state ?? {})) setState.run(key, value);
        return undefined;
      }
      case 'purge':
        return purge[op.table](op.before, op.after, op.max);
      case 'inspect':
        return {
          journalMode: db.pragma('journal_mode', { simple: true }),
          synchronous: db.pragma('synchronous', { simple: true }),
          fullfsync: db.pragma('fullfsync', { simple: true }),
          userVersion: db.pragma('user_version', { simple: true }),
        } satisfies Record<keyof WriterPragmas, unknown>;
    }
  };
}

/**
 * Retention's steps, one per table. Each looks at no more than `max` rows — the oldest after
 * `after`, in seq order — and deletes those that are old enough, so that one op never holds
 * the writer for long, however large the table or however little of it is old. Rows are
 * stored in time order (seq follows acceptance), so the walk stops at the first row that is
 * too young: everything after it is younger still. A run is judged by its end, but no run
 * accepted after `before` can have ended before it, so its acceptance time stops the walk;
 * queued and running runs are never deleted. Deleting a run fires no trigger (`ready` only
 * holds queued runs). Events keep their seq counter (AUTOINCREMENT): seq is never reused.
 */
function purgeSteps(db: Database.Database): Record<PurgeTable, (before: string, after: number, max: number) => PurgeStep> {
  const window = {
    events: db.prepare<[number, number], { seq: number; t: string }>('SELECT seq, at AS t FROM events WHERE seq > ? ORDER BY seq LIMIT ?'),
    history: db.prepare<[number, number], { seq: number; t: string | null }>('SELECT seq, at AS t FROM history WHERE seq > ? ORDER BY seq LIMIT ?'),
    // A run whose delivery is still pending stays (its summary is yet to come); its outbox row
    // goes with it otherwise.
    runs: db.prepare<[number, number], { seq: number; t: string; status: string; ended_at: string | null; pending: number }>(
      `SELECT seq, created_at AS t, status, ended_at,
        EXISTS (SELECT 1 FROM outbox WHERE outbox.run_id = runs.run_id AND outbox.status = 'pending') AS pending
      FROM runs WHERE seq > ? ORDER BY seq LIMIT ?`,
    ),
    // A run's row goes with its run (above); heartbeat rows once settled.
    outbox: db.prepare<[number, number], { seq: number; t: string; status: string; run_id: string | null }>(
      'SELECT id AS seq, created_at AS t, status, run_id FROM outbox WHERE id > ? ORDER BY id LIMIT ?',
    ),
  };
  const remove = {
    events: db.prepare('DELETE FROM events WHERE seq = ?'),
    history: db.prepare('DELETE FROM history WHERE seq = ?'),
    runs: db.prepare('DELETE FROM runs WHERE seq = ?'),
    outbox: db.prepare('DELETE FROM outbox WHERE id = ?'),
  };
  const removeRunOutbox = db.prepare('DELETE FROM outbox WHERE run_id = (SELECT run_id FROM runs WHERE seq = ?)');
  const ended = new Set(['succeeded', 'failed', 'timed_out']);
  const step = <R extends { seq: number; t: string | null }>(table: PurgeTable, old: (row: R, before: string) => boolean) =>
    (before: string, after: number, max: number): PurgeStep => {
      const rows = (window[table] as Database.Statement<[number, number], R>).all(after, max);
      let deleted = 0;
      for (const row of rows) {
        if (row.t !== null && row.t >= before) return { deleted };
        if (old(row, before)) deleted += remove[table].run(row.seq).changes;
      }
      return rows.length < max ? { deleted } : { deleted, next: rows[rows.length - 1]!.seq };
    };
  return {
    events: step('events', () => true),
    history: step('history', (row) => row.t !== null),
    runs: step<{ seq: number; t: string; status: string; ended_at: string | null; pending: number }>(
      'runs',
      (row, before) => {
        const old = ended.has(row.status) && row.ended_at !== null && row.ended_at < before && row.pending === 0;
        if (old) removeRunOutbox.run(row.seq);
        return old;
      },
    ),
    outbox: step<{ seq: number; t: string; status: string; run_id: string | null }>(
      'outbox',
      (row) => row.run_id === null && row.status !== 'pending',
    ),
  };
}

/**
 * Builds the batch runner: the whole batch in ONE transaction (BEGIN IMMEDIATE … COMMIT, one
 * fsync). The common case runs the ops straight through. When an op fails, SQLite has rolled
 * the transaction back, and the batch runs again with each op in its own SAVEPOINT
 * (better-sqlite3 turns a nested transaction function into one), so the failing op is
 * reported alone and its batch-mates still commit. Savepoints on every op cost ~30 % of the
 * writer's time (measured with `npm run bench`), so only the rare failing batch pays for them.
 */
function batchRunner(db: Database.Database) {
  const apply = handlers(db);
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
