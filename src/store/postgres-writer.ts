import type pg from 'pg';
import { EVENT_COLUMNS, OUTBOX_COLUMNS, RUN_COLUMNS, callbackValues, eventValues, forwardValues, keyValues, outboxValues, runValues } from './rows.js';
import { EVENTS_LOCK, HEARTBEAT_CHANNEL, pgStoreError } from './postgres-schema.js';
import { REQUEST_COLUMNS, requestValues } from './request-rows.js';
import * as sql from './sql/index.js';
import type { NewCallback, NewDelivery, NewEvent, NewForward, NewKey, NewRequestLog, NewRun } from './records.js';
import { StoreError } from './store.js';

/**
 * The write side of the PostgreSQL store: transactions on a pooled client, and group commit
 * of accepts — the request path's writes.
 */

/** Runs `fn` in one transaction on a client of the pool; any failure rolls it back. */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw pgStoreError(err);
  }
  let broken: unknown;
  try {
    await client.query('BEGIN');
    const value = await fn(client);
    await client.query('COMMIT');
    return value;
  } catch (err) {
    broken = err;
    await client.query('ROLLBACK').catch(() => {});
    throw pgStoreError(err);
  } finally {
    // A client whose connection failed is destroyed rather than handed to the next caller.
    client.release(broken !== undefined && pgStoreError(broken).code === 'unavailable' ? (broken as Error) : undefined);
  }
}

const columnCount = (columns: string) => columns.split(',').length;

/**
 * PostgreSQL's text cannot hold U+0000 (SQLite's can), and a payload may carry one: it is
 * stored as U+FFFD rather than failing the request, whose 503 the sender would retry forever.
 */
export function pgText<T>(v: T): T {
  return typeof v === 'string' && v.includes('\0') ? (v.replaceAll('\0', '\uFFFD') as T) : v;
}

/**
 * Inserts rows into a table in one statement, whatever their number (one array parameter per
 * column, `unnest`ed): a batch of accepts costs one round trip per table, not one per row.
 * The column casts come from `types`, in the columns' order; `status`: a constant status column.
 */
async function insertMany(c: pg.ClientBase, table: string, columns: string, types: string, rows: unknown[][], status?: string): Promise<void> {
  if (rows.length === 0) return;
  const n = columnCount(columns);
  const cols: unknown[][] = Array.from({ length: n }, () => new Array(rows.length));
  for (let r = 0; r < rows.length; r++) for (let i = 0; i < n; i++) cols[i]![r] = pgText(rows[r]![i]);
  const casts = types.split(',').map((t, i) => `$${i + 1}::${t.trim()}[]`).join(', ');
  // WITH ORDINALITY … ORDER BY: identities (seq) are handed out in the order of `rows`.
  await c.query(
    `INSERT INTO ${table} (${status ? 'status, ' : ''}${columns}) SELECT ${status ? `'${status}', ` : ''}${columns}
     FROM unnest(${casts}) WITH ORDINALITY AS u(${columns}, ord) ORDER BY ord`,
    cols,
  );
}

/**
 * Inserts events after taking {@link EVENTS_LOCK}, so that their seq follows commit order.
 * When one of them asks for a heartbeat now ({@link NewEvent.wakesNow}), NOTIFYs the leader
 * in the same transaction: PostgreSQL delivers it on COMMIT only, so the leader's turn sees
 * the events, and a rolled-back batch wakes nobody.
 */
export async function insertEvents(c: pg.ClientBase, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await c.query('SELECT pg_advisory_xact_lock($1)', [EVENTS_LOCK.toString()]);
  await insertMany(c, 'events', EVENT_COLUMNS, sql.events.insertEvent.pgTypes, events.map(eventValues));
  if (events.some((e) => e.wakesNow)) await c.query(`NOTIFY ${HEARTBEAT_CHANNEL}`);
}

/**
 * Moves a source's held wakes into the events (flow control, sql/flow.ts), under
 * {@link EVENTS_LOCK} like any insert of events; NOTIFYs the heartbeat leader when it moved
 * any, so that the leader's next turn takes them. Resolves with how many moved.
 */
export async function releaseWakes(c: pg.ClientBase, source: string): Promise<number> {
  await c.query('SELECT pg_advisory_xact_lock($1)', [EVENTS_LOCK.toString()]);
  const moved = (await c.query(sql.flow.releaseWakes.pg, [source])).rowCount ?? 0;
  if (moved > 0) await c.query(`NOTIFY ${HEARTBEAT_CHANNEL}`);
  return moved;
}

/** Inserts an outbox row (pending, due at once). */
export async function insertOutbox(c: pg.ClientBase, d: NewDelivery, runId: string | null): Promise<void> {
  await insertMany(c, 'outbox', OUTBOX_COLUMNS, sql.outbox.insertOutbox.pgTypes, [outboxValues(d, runId)], 'pending');
}

/** Inserts a run's callback row (pending, due at once; docs/callbacks.md). */
export async function insertCallback(c: pg.ClientBase, cb: NewCallback, runId: string): Promise<void> {
  await insertMany(c, 'outbox', OUTBOX_COLUMNS, sql.outbox.insertOutbox.pgTypes, [callbackValues(cb, runId)], 'pending');
}

/** One `accept` call. */
export interface AcceptOp {
  events: NewEvent[];
  runs: NewRun[];
  keys?: NewKey[];
  /** Forward mode: the outbox rows of the events and runs, left out with them when their key is held. */
  forwards?: NewForward[];
  /** The request log's row of the accepting request: left out when one of its keys was held. */
  request?: NewRequestLog;
}

/** Inserts request-log rows in one statement. */
export async function insertRequests(c: pg.ClientBase, rows: readonly NewRequestLog[]): Promise<void> {
  await insertMany(c, 'requests', REQUEST_COLUMNS, sql.requests.insertRequest.pgTypes, rows.map(requestValues));
}

/**
 * Writes accepts in the open transaction and returns, per op, the indexes of its keys that
 * were already held. A key is held when a live row has it (one whose `at` is not before
 * `expiredBefore`; an expired one is taken over) or an earlier op of these has it; a held
 * key's events and runs are left out.
 */
async function writeAccepts(c: pg.ClientBase, ops: readonly AcceptOp[], expiredBefore: string): Promise<(number[] | undefined)[]> {
  const held: (number[] | undefined)[] = Array.from({ length: ops.length }, () => undefined);
  const firstUse = new Map<string, NewKey>();
  for (const op of ops) for (const k of op.keys ?? []) if (!firstUse.has(k.key)) firstUse.set(k.key, k);
  let taken: Set<string> | undefined;
  if (firstUse.size > 0) {
    const rows = [...firstUse.values()].map(keyValues);
    const cols = Array.from({ length: 5 }, (_, i) => rows.map((r) => r[i]));
    const { rows: got } = await c.query<{ key: string }>(sql.idempotency.claimKeys.pg, [...cols, expiredBefore]);
    taken = new Set(got.map((r) => r.key));
  }
  const skip = new Set<string>();
  const events: NewEvent[] = [];
  const runs: NewRun[] = [];
  const forwards: NewForward[] = [];
  ops.forEach((op, o) => {
    op.keys?.forEach((k, i) => {
      if (firstUse.get(k.key) === k && taken!.has(k.key)) return;
      (held[o] ??= []).push(i);
      for (const id of k.eventIds) skip.add(id);
      for (const id of k.runIds) skip.add(id);
    });
  });
  const requests: NewRequestLog[] = [];
  ops.forEach((op, o) => {
    if (op.request && held[o] === undefined) requests.push(op.request);
  });
  const heldWakes: NewEvent[] = [];
  for (const op of ops) {
    for (const e of op.events) if (!skip.has(e.id)) (e.held ? heldWakes : events).push(e);
    for (const r of op.runs) if (!skip.has(r.runId)) runs.push(r);
    if (op.forwards) for (const f of op.forwards) if (!skip.has(f.key)) forwards.push(f);
  }
  await insertEvents(c, events);
  if (heldWakes.length > 0) await insertMany(c, 'held_events', EVENT_COLUMNS, sql.events.insertEvent.pgTypes, heldWakes.map(eventValues));
  await insertMany(c, 'runs', RUN_COLUMNS, sql.runs.insertRun.pgTypes, runs.map(runValues), 'queued');
  await insertMany(c, 'outbox', OUTBOX_COLUMNS, sql.outbox.insertOutbox.pgTypes, forwards.map(forwardValues), 'pending');
  await insertRequests(c, requests);
  return held;
}

/**
 * An error that one op's data caused — integrity (SQLSTATE class 23) or a value the column
 * cannot take (class 22) — and that fails that op alone, not its batch-mates.
 */
function opLevel(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

interface Pending {
  op: AcceptOp;
  resolve: (held: number[] | undefined) => void;
  reject: (err: unknown) => void;
}

/** Counters for benchmarks and specs. */
export interface CommitStats {
  commits: number;
  ops: number;
  largestBatch: number;
  commitMs: number;
}

/**
 * Group commit for accepts: calls made while a commit is in flight (and those of one turn of
 * the event loop) are written together in ONE transaction, and each resolves once it has
 * committed. Normally the whole batch goes in one statement per table. When that breaks a
 * constraint, the batch is rolled back and written again with each op in its own SAVEPOINT,
 * so that only the offending op rejects and its batch-mates still commit (as in SQLite,
 * sqlite-writer.ts). A connection or database failure rejects the whole batch `unavailable`:
 * nothing in it is answered 2xx unless its COMMIT succeeded.
 */
export function acceptBatcher(tx: <T>(fn: (c: pg.PoolClient) => Promise<T>) => Promise<T>, expiredBefore: () => string, batchMax: number, onCommit?: (accepts: number) => void) {
  const queue: Pending[] = [];
  let inFlight: Promise<void> | undefined;
  let scheduled = false;
  const stats: CommitStats = { commits: 0, ops: 0, largestBatch: 0, commitMs: 0 };

  const isolated = async (c: pg.PoolClient, batch: Pending[], before: string) => {
    const out: ({ held?: number[] } | { error: StoreError })[] = [];
    for (const p of batch) {
      await c.query('SAVEPOINT op');
      try {
        out.push({ held: (await writeAccepts(c, [p.op], before))[0] });
        await c.query('RELEASE SAVEPOINT op');
      } catch (err) {
        if (!opLevel(err)) throw err; // the connection or the database: the whole batch fails
        await c.query('ROLLBACK TO SAVEPOINT op');
        out.push({ error: pgStoreError(err) });
      }
    }
    return out;
  };

  const run = async (batch: Pending[]) => {
    const t0 = performance.now();
    const before = expiredBefore();
    try {
      let outcome: ({ held?: number[] } | { error: StoreError })[];
      try {
        outcome = await tx(async (c) => (await writeAccepts(c, batch.map((p) => p.op), before)).map((held) => ({ held })));
      } catch (err) {
        if (!opLevel((err as Error).cause ?? err)) throw err;
        outcome = await tx((c) => isolated(c, batch, before));
      }
      stats.commits++;
      stats.ops += batch.length;
      stats.largestBatch = Math.max(stats.largestBatch, batch.length);
      onCommit?.(batch.length);
      batch.forEach((p, i) => {
        const o = outcome[i]!;
        if ('error' in o) p.reject(o.error);
        else p.resolve(o.held);
      });
    } catch (err) {
      const e = pgStoreError(err);
      for (const p of batch) p.reject(e);
    } finally {
      stats.commitMs += performance.now() - t0;
    }
  };

  const flush = () => {
    if (inFlight || queue.length === 0) return;
    const batch = queue.splice(0, batchMax);
    inFlight = run(batch).finally(() => {
      inFlight = undefined;
      flush(); // what arrived meanwhile already waited: it goes at once
    });
  };

  return {
    stats,
    accept(op: AcceptOp): Promise<number[] | undefined> {
      return new Promise((resolve, reject) => {
        queue.push({ op, resolve, reject });
        if (!inFlight && !scheduled) {
          // Wait for the end of this turn of the event loop, so that everything accepted in it shares the commit.
          scheduled = true;
          setImmediate(() => {
            scheduled = false;
            flush();
          });
        }
      });
    },
    /** Resolves once nothing is queued or in flight. */
    async drain(): Promise<void> {
      while (inFlight || queue.length > 0 || scheduled) await (inFlight ?? new Promise((r) => setImmediate(r)));
    },
  };
}
