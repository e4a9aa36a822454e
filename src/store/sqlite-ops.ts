/**
 * The store writer's ops: what the main thread queues (`WriteOp`, sent in batches to the writer
 * thread, sqlite-writer.ts) and how the writer applies each, over statements (sql/*.ts)
 * prepared once on its connection — retention's purge steps (sqlite-purge.ts) among them.
 */
import type Database from 'better-sqlite3';
import type { PurgeTable } from './maintenance.js';
import {
  ENDED_STATUSES, type DeliveryOutcomeRecord, type HistoryMessage, type NewDelivery, type RunEffects, type RunEnd, type SettleEffects,
} from './records.js';
import { callbackValues, eventValues, outboxValues, type Bind, type OutboxRow, type RunRow } from './rows.js';
import { purgeSteps } from './sqlite-purge.js';
import * as sql from './sql/index.js';

/**
 * One write, as the main thread queues it. Accepted events and runs travel as their INSERT's
 * bind values (`eventValues`, `runValues`): an array crosses the thread boundary faster than
 * an object, whose every key is serialized too, and accepts are most of the traffic.
 */
export type WriteOp =
  | { kind: 'accept'; events: Bind[][]; held?: Bind[][]; runs: Bind[][]; keys?: KeyOp[]; expiredBefore?: string; forwards?: ForwardOp[]; request?: Bind[] }
  | { kind: 'requests'; rows: Bind[][] }
  | { kind: 'purgeBodies'; now: string; max: number }
  | { kind: 'claim'; limit: number; startedAt: string; rules?: { held: string; limits: string } }
  | { kind: 'finish'; runId: string; end: RunEnd; effects: RunEffects; at: string }
  | { kind: 'requeue'; runIds: string[] }
  | { kind: 'append'; sessionKey: string; messages: HistoryMessage[]; state?: Record<string, string>; events: Bind[][]; at: string; delivery?: NewDelivery }
  | { kind: 'claimOutbox'; now: string; limit: number; leaseUntil: string }
  | { kind: 'ackPart'; id: number; part: number }
  | { kind: 'retryDelivery'; id: number; at: string; error: string }
  | { kind: 'settleDelivery'; id: number; outcome: DeliveryOutcomeRecord; effects: SettleEffects }
  | { kind: 'purge'; table: PurgeTable | 'requests'; before: string; after: number; max: number }
  | { kind: 'purgeKeys'; before: string; max: number }
  | { kind: 'pause'; id: string; paused: boolean; at: string }
  | { kind: 'releaseWakes'; source: string }
  | { kind: 'inspect' };

/** An idempotency key in an accept: its INSERT's values and the ids of the rows it guards. */
export interface KeyOp {
  values: Bind[];
  events: string[];
  runs: string[];
}

/** A forward row in an accept: the id of the event or run it carries, and its INSERT's values. */
export type ForwardOp = [key: string, values: Bind[]];

/** What `inspect` returns: the writer connection's settings, read back from SQLite. */
export interface WriterPragmas {
  journalMode: string;
  /** 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA (https://www.sqlite.org/pragma.html#pragma_synchronous). */
  synchronous: number;
  fullfsync: number;
  userVersion: number;
  /** Pages, or KiB when negative (https://www.sqlite.org/pragma.html#pragma_cache_size). */
  cacheSize: number;
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
 * arguments directly (measured in docs/performance.md).
 */
export function opHandlers(db: Database.Database): (op: WriteOp) => unknown {
  const insertEvent = db.prepare(sql.events.insertEvent.sqlite);
  const insertRun = db.prepare(sql.runs.insertRun.sqlite);
  const insertHeld = db.prepare(sql.flow.insertHeld.sqlite);
  const pause = db.prepare(sql.flow.pause.sqlite);
  const resume = db.prepare(sql.flow.resume.sqlite);
  const releaseMove = db.prepare(sql.flow.releaseWakes.sqlite.move);
  const releaseRemove = db.prepare(sql.flow.releaseWakes.sqlite.remove);
  const claim = db.prepare<{ limit: number; started_at: string }, RunRow>(sql.runs.claimRuns.sqlite);
  const claimWithRules = db.prepare<{ limit: number; started_at: string; held: string; limits: string }, RunRow>(sql.runs.claimRunsWithRules.sqlite);
  const finish = db.prepare<Record<string, string | null>, { session_key: string }>(sql.runs.finishRun.sqlite);
  const requeue = db.prepare(sql.runs.requeueRuns.sqlite);
  const settleRun = db.prepare(sql.runs.settleRun.sqlite);
  const insertHistory = db.prepare(sql.history.insertHistory.sqlite);
  const setState = db.prepare(sql.history.setState.sqlite);
  const claimKey = db.prepare(sql.idempotency.claimKeys.sqlite);
  const purgeKeys = db.prepare(sql.idempotency.purgeKeys.sqlite);
  const insertOutbox = db.prepare(sql.outbox.insertOutbox.sqlite);
  const claimOutbox = db.prepare<{ now: string; limit: number; lease: string }, OutboxRow>(sql.outbox.claimOutbox.sqlite);
  const nextDue = db.prepare<[], { at: string | null }>(sql.outbox.nextDue.sqlite);
  const ackPart = db.prepare(sql.outbox.ackPart.sqlite);
  const retryDelivery = db.prepare(sql.outbox.retryDelivery.sqlite);
  const settleDelivery = db.prepare<Record<string, string | number | null>, { run_id: string | null }>(sql.outbox.settleDelivery.sqlite);
  const insertRequest = db.prepare(sql.requests.insertRequest.sqlite);
  const purgeBodies = db.prepare(sql.requests.purgeBodies.sqlite);

  const appendHistory = (sessionKey: string, messages: readonly HistoryMessage[], at: string) => {
    for (const m of messages) insertHistory.run(sessionKey, m.role, m.content, at);
  };
  const purge = purgeSteps(db);

  return (op: WriteOp): unknown => {
    switch (op.kind) {
      case 'accept': {
        if (!op.keys) {
          for (const e of op.events) insertEvent.run(...e);
          if (op.held) for (const e of op.held) insertHeld.run(...e);
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
        if (op.held) for (const e of op.held) if (!skip?.has(e[0] as string)) insertHeld.run(...e);
        for (const r of op.runs) if (!skip?.has(r[0] as string)) insertRun.run(...r);
        if (op.forwards) for (const [key, f] of op.forwards) if (!skip?.has(key)) insertOutbox.run(...f);
        // A request answered as a replay of the first (a key held) is logged as such by its caller.
        if (op.request && !held) insertRequest.run(...op.request);
        return held;
      }
      case 'requests':
        for (const r of op.rows) insertRequest.run(...r);
        return undefined;
      case 'pause':
        if (op.paused) pause.run(op.id, op.at);
        else resume.run(op.id);
        return undefined;
      case 'releaseWakes': {
        const moved = releaseMove.run(op.source).changes;
        releaseRemove.run(op.source);
        return moved;
      }
      case 'purgeBodies':
        return purgeBodies.run(op.now, op.max).changes;
      case 'purgeKeys':
        return purgeKeys.run(op.before, op.max).changes;
      case 'claim':
        // RETURNING gives rows in no defined order (https://www.sqlite.org/lang_returning.html).
        return (op.rules ? claimWithRules.all({ limit: op.limit, started_at: op.startedAt, ...op.rules }) : claim.all({ limit: op.limit, started_at: op.startedAt }))
          .sort((a, b) => a.seq - b.seq);
      case 'finish': {
        const { end } = op;
        if (!ENDED_STATUSES.includes(end.status)) {
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
        if (op.effects.callback) insertOutbox.run(...callbackValues(op.effects.callback, op.runId));
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
          cacheSize: db.pragma('cache_size', { simple: true }),
        } satisfies Record<keyof WriterPragmas, unknown>;
    }
  };
}
