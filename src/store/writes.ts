import type { Db } from './dialect.js';
import { purgeStep } from './purge.js';
import type { PurgeTable } from './maintenance.js';
import {
  ENDED_STATUSES, type ClaimRules, type DeliveryOutcomeRecord, type HistoryMessage, type NewDelivery, type RunEffects, type RunEnd,
  type SettleEffects,
} from './records.js';
import { callbackValues, eventValues, outboxValues, unfolded, type Bind, type OutboxRow, type RunRow } from './rows.js';
import * as sql from './sql/index.js';
import { StoreError } from './store.js';

/** One accept as bind values: arrays cross the writer thread's boundary cheaper than objects. */
export interface AcceptOp {
  kind: 'accept';
  events: Bind[][];
  held?: Bind[][];
  runs: Bind[][];
  keys?: { values: Bind[]; events: string[]; runs: string[] }[];
  /** With keys: a key accepted before this time has expired and is taken over. */
  expiredBefore?: string;
  forwards?: [key: string, values: Bind[]][];
  request?: Bind[];
  /** Its one event or run with the request's row folded in (rows.ts foldedRow), instead of `request` and that row. */
  folded?: { into: 'events' | 'runs'; values: Bind[] };
  /** An event asks for a heartbeat now (NewEvent.wakesNow). */
  wakesNow?: boolean;
}

/** A batch's outcome: each op's result, and the ops that failed alone. */
export interface BatchOutcome<E = unknown> {
  values?: unknown[];
  failed?: [index: number, error: E][];
}

const insertOutbox = (db: Db, rows: Bind[][]) => db.insert(sql.outbox.insertOutbox, rows.map((r) => ['pending', ...r]));

/** PostgreSQL: under the events lock, and a NOTIFY to the leader that COMMIT delivers. */
async function insertEvents(db: Db, rows: Bind[][], wakesNow = false, statement = sql.events.insertEvents): Promise<void> {
  if (rows.length === 0) return;
  if (db.kind === 'pg') await db.run(sql.events.lockEvents);
  await db.insert(statement, rows);
  if (wakesNow && db.kind === 'pg') await db.run(`NOTIFY ${sql.events.HEARTBEAT_CHANNEL}`);
}

async function appendTurns(db: Db, sessionKey: string, messages: readonly HistoryMessage[], at: string): Promise<void> {
  await db.insert(sql.history.insertHistory, messages.map((m) => [sessionKey, m.role, m.content, at]));
}

async function setState(db: Db, state: Record<string, string> | undefined): Promise<void> {
  await db.insert(sql.history.setState, Object.entries(state ?? {}));
}

/** Claims the keys of accepts (of one window): per op, the indexes of its keys already held (by a live row or an earlier op), and the ids of the rows they guard. */
async function claimKeys(db: Db, ops: readonly AcceptOp[], expiredBefore: string | undefined) {
  const held: (number[] | undefined)[] = ops.map(() => undefined);
  const first = new Map<string, NonNullable<AcceptOp['keys']>[number]>();
  for (const op of ops) for (const k of op.keys ?? []) if (!first.has(k.values[0] as string)) first.set(k.values[0] as string, k);
  if (first.size === 0) return { held };
  const rows = [...first.values()].map((k) => k.values);
  const taken = new Set((await db.insert<{ key: string }>(sql.idempotency.claimKeys, rows, [expiredBefore])).map((r) => r.key));
  const skip = new Set<string>();
  ops.forEach((op, o) => op.keys?.forEach((k, i) => {
    if (first.get(k.values[0] as string) === k && taken.has(k.values[0] as string)) return;
    (held[o] ??= []).push(i);
    for (const id of [...k.events, ...k.runs]) skip.add(id);
  }));
  return { held, skip };
}

/** Writes accepts, leaving out the rows of keys already held; per op, the indexes of those keys. */
async function writeAccepts(db: Db, ops: readonly AcceptOp[], expiredBefore: string | undefined): Promise<(number[] | undefined)[]> {
  const { held, skip } = await claimKeys(db, ops, expiredBefore);
  const events: Bind[][] = [], heldEvents: Bind[][] = [], runs: Bind[][] = [], forwards: Bind[][] = [], requests: Bind[][] = [];
  const keep = (rows: readonly Bind[][] | undefined, into: Bind[][], status?: string) => {
    for (const r of rows ?? []) if (!skip?.has(r[0] as string)) into.push(status ? [status, ...r] : r);
  };
  let wakesNow = false;
  ops.forEach((op, o) => {
    // In op order: an event's seq is the /events cursor.
    keep(op.folded?.into === 'events' ? [op.folded.values] : op.events.map(unfolded), events);
    keep(op.held, heldEvents);
    keep(op.folded?.into === 'runs' ? [op.folded.values] : op.runs.map(unfolded), runs, 'queued');
    for (const [key, f] of op.forwards ?? []) if (!skip?.has(key)) forwards.push(f);
    if (op.request && !held[o]) requests.push(op.request);
    wakesNow ||= op.wakesNow === true;
  });
  await insertEvents(db, events, wakesNow, sql.events.insertAccepted);
  await db.insert(sql.flow.insertHeld, heldEvents);
  await db.insert(sql.runs.insertRuns, runs);
  await insertOutbox(db, forwards);
  await db.insert(sql.requests.insertRequests, requests);
  return held;
}

async function claimRuns(db: Db, op: { limit: number | null; startedAt: string; instance: string | null; rules?: ClaimRules }): Promise<RunRow[]> {
  if (op.limit === 0) return [];
  const params: unknown[] = [op.limit, op.startedAt, op.instance];
  if (op.rules) {
    const limits = Object.entries(op.rules.limits ?? {});
    if (db.kind === 'pg') {
      await db.run(sql.runs.claimLock);
      params.push(op.rules.held ?? [], limits.map(([s]) => s), limits.map(([, l]) => l));
    } else params.push(JSON.stringify(op.rules.held ?? []), JSON.stringify(op.rules.limits ?? {}));
  }
  // RETURNING gives rows in no defined order (https://www.sqlite.org/lang_returning.html).
  return (await db.all<RunRow>(op.rules ? sql.runs.claimRunsWithRules : sql.runs.claimRuns, params)).sort((a, b) => a.seq - b.seq);
}

async function finishRun(db: Db, op: { runId: string; end: RunEnd; effects: RunEffects; at: string }): Promise<void> {
  const { end, effects, runId } = op;
  if (!ENDED_STATUSES.includes(end.status)) throw new StoreError('constraint', `a run cannot end with status ${String(end.status)}`);
  const row = await db.get<{ session_key: string }>(sql.runs.finishRun,
    [runId, end.status, end.endedAt, end.reply ?? null, end.error ?? null, end.errorCode ?? null, end.deliveredTo ?? null]);
  if (!row) throw new StoreError('run_not_running', `run ${runId} is not running`);
  if (effects.summary) await insertEvents(db, [eventValues(effects.summary)], effects.summary.wakesNow);
  if (effects.delivery) await insertOutbox(db, [outboxValues(effects.delivery, runId)]);
  if (effects.callback) await insertOutbox(db, [callbackValues(effects.callback, runId)]);
  await appendTurns(db, row.session_key, effects.history ?? [], op.at);
}

async function settleDelivery(db: Db, op: { id: number; outcome: DeliveryOutcomeRecord; effects: SettleEffects }): Promise<void> {
  const { outcome, effects } = op;
  const row = await db.get<{ run_id: string | null }>(sql.outbox.settleDelivery,
    [op.id, outcome.status, outcome.status === 'failed' ? outcome.error : null, outcome.at]);
  if (!row) throw new StoreError('constraint', `delivery ${op.id} is not pending`);
  const r = effects.run;
  if (row.run_id !== null && r) {
    await db.run(sql.runs.settleRun, [row.run_id, r.deliveredTo ?? null, r.error ?? null, r.errorCode ?? null, r.status ?? null,
      r.endedAt ?? null, r.forwarded ? JSON.stringify(r.forwarded) : null]);
  }
  if (effects.summary) await insertEvents(db, [eventValues(effects.summary)], effects.summary.wakesNow);
  await setState(db, effects.state);
}

/** Each op but an accept, by kind: its fields are what its function takes. */
const APPLY = {
  requests: async (db: Db, op: { rows: Bind[][] }) => void await db.insert(sql.requests.insertRequests, op.rows),
  claim: claimRuns,
  finish: finishRun,
  requeue: async (db: Db, op: { runIds: string[] }) => {
    for (const id of op.runIds) await db.run(sql.runs.requeueRun, [id]);
  },
  append: async (db: Db, op: { sessionKey: string; messages: HistoryMessage[]; state?: Record<string, string>; events: Bind[][]; wakesNow?: boolean; at: string; delivery?: NewDelivery }) => {
    await appendTurns(db, op.sessionKey, op.messages, op.at);
    await setState(db, op.state);
    await insertEvents(db, op.events, op.wakesNow);
    if (op.delivery) await insertOutbox(db, [outboxValues(op.delivery, null)]);
  },
  claimOutbox: async (db: Db, op: { now: string; limit: number | null; leaseUntil: string; instance: string | null }) => {
    const rows = op.limit === 0 ? [] : await db.all<OutboxRow>(sql.outbox.claimOutbox, [op.now, op.limit, op.leaseUntil, op.instance]);
    rows.sort((a, b) => a.next_at.localeCompare(b.next_at) || a.id - b.id);
    return { rows, nextAt: (await db.get<{ at: string | null }>(sql.outbox.nextDue))?.at ?? undefined };
  },
  ackPart: async (db: Db, op: { id: number; part: number }) => void await db.run(sql.outbox.ackPart, [op.id, op.part]),
  retryDelivery: async (db: Db, op: { id: number; at: string; error: string }) => void await db.run(sql.outbox.retryDelivery, [op.id, op.at, op.error]),
  settleDelivery,
  purge: (db: Db, op: { table: PurgeTable | 'requests'; before: string; after: number; max: number }) => purgeStep(db, op.table, op.before, op.after, op.max),
  purgeBodies: (db: Db, op: { now: string; max: number }) => db.run(sql.requests.purgeBodies, [op.now, op.max]),
  purgeKeys: (db: Db, op: { before: string; max: number }) => db.run(sql.idempotency.purgeKeys, [op.before, op.max]),
  compactTallies: async (db: Db, _op: object) => void await db.run(sql.tallies.compactTallies),
  keepState: async (db: Db, op: { key: string; value: string; replace: boolean }) => {
    await db.run(op.replace ? sql.history.replaceState : sql.history.keepState, [op.key, op.value]);
    return (await db.get<{ value: string }>(sql.history.getState, [op.key]))!.value;
  },
  pause: async (db: Db, op: { id: string; paused: boolean; at: string }) => void await db.run(op.paused ? sql.flow.pause : sql.flow.resume, op.paused ? [op.id, op.at] : [op.id]),
  releaseWakes: async (db: Db, op: { source: string }) => {
    if (db.kind === 'pg') await db.run(sql.events.lockEvents);
    const moved = await db.run(sql.flow.releaseWakes, [op.source]);
    if (db.kind === 'sqlite') await db.run(sql.flow.removeReleased, [op.source]);
    if (moved > 0 && db.kind === 'pg') await db.run(`NOTIFY ${sql.events.HEARTBEAT_CHANNEL}`);
    return moved;
  },
};

type Applied = typeof APPLY;
export type WriteOp = AcceptOp | { [K in keyof Applied]: { kind: K } & Parameters<Applied[K]>[1] }[keyof Applied];

/** Applies ops in order in the open transaction; neighbouring accepts share their statements, those with keys if of one key window. */
export async function applyOps(db: Db, ops: readonly WriteOp[]): Promise<unknown[]> {
  const values: unknown[] = [];
  for (let i = 0; i < ops.length;) {
    const op = ops[i]!;
    if (op.kind !== 'accept') {
      values.push(await (APPLY[op.kind] as (db: Db, op: WriteOp) => Promise<unknown>)(db, op));
      i++;
      continue;
    }
    let j = i + 1;
    let window = op.expiredBefore;
    for (; j < ops.length && ops[j]!.kind === 'accept'; j++) {
      const next = (ops[j] as AcceptOp).expiredBefore;
      if (next !== undefined && window !== undefined && next !== window) break;
      window ??= next;
    }
    values.push(...await writeAccepts(db, ops.slice(i, j) as AcceptOp[], window));
    i = j;
  }
  return values;
}

class OneFailed extends Error {}

/** Runs a batch in ONE transaction; when an op fails on its own data, again with each op in a SAVEPOINT, so only that op fails. */
export async function runBatch(db: Db, ops: readonly WriteOp[]): Promise<BatchOutcome> {
  const outcome = (values: unknown[]): BatchOutcome => (values.some((v) => v !== undefined) ? { values } : {});
  try {
    return await db.transaction(async (tx) => {
      try {
        return outcome(await applyOps(tx, ops));
      } catch (err) {
        throw tx.failsAlone(err) ? new OneFailed('', { cause: err }) : err;
      }
    });
  } catch (err) {
    if (!(err instanceof OneFailed)) throw err;
  }
  return db.transaction(async (tx) => {
    const values: unknown[] = [];
    const failed: [number, unknown][] = [];
    for (let i = 0; i < ops.length; i++) {
      await tx.run('SAVEPOINT op');
      try {
        values.push((await applyOps(tx, [ops[i]!]))[0]);
        await tx.run('RELEASE SAVEPOINT op');
      } catch (err) {
        if (!tx.failsAlone(err)) throw err;
        await tx.run('ROLLBACK TO SAVEPOINT op');
        await tx.run('RELEASE SAVEPOINT op');
        values.push(undefined);
        failed.push([i, err]);
      }
    }
    return failed.length ? { ...outcome(values), failed } : outcome(values);
  });
}
