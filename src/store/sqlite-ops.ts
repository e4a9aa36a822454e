/**
 * The store writer's ops: what the main thread queues (`WriteOp`, sent in batches to the writer
 * thread, sqlite-writer.ts) and how the writer applies each, over statements prepared once on
 * its connection — retention's purge steps among them.
 */
import type Database from 'better-sqlite3';
import {
  EVENT_COLUMNS, KEY_COLUMNS, OUTBOX_COLUMNS, RUN_COLUMNS, eventValues, outboxValues, type Bind, type OutboxRow, type RunRow,
} from './sqlite-schema.js';
import { REQUEST_COLUMNS } from './request-rows.js';
import type { DeliveryOutcomeRecord, HistoryMessage, NewDelivery, RunEffects, RunEnd, SettleEffects } from './records.js';

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

/** An op's own failure, with the code the main thread gets (`run_not_running`, `constraint`, …). */
export class OpError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/**
 * The op handlers, over statements prepared once; sqlite-writer.ts runs them in its batch's
 * transaction (batchRunner). The INSERTs of rows.ts values get them spread as arguments:
 * better-sqlite3 reads an array argument's elements through V8's slow element lookup,
 * arguments directly (0.4 µs less for a request row).
 */
export function opHandlers(db: Database.Database): (op: WriteOp) => unknown {
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
