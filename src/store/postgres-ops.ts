/**
 * The PostgreSQL store's writes other than accepts (postgres-writer.ts), each the body of one
 * transaction on a pooled client: what postgres.ts runs for the Store calls that end runs,
 * append conversations and work the outbox. Its counterpart in the embedded store is
 * sqlite-ops.ts; the statements of both are in sql/.
 */
import type pg from 'pg';
import { insertCallback, insertEvents, insertOutbox, pgText } from './postgres-writer.js';
import {
  ENDED_STATUSES, type DeliveryOutcomeRecord, type DeliveryRecord, type HistoryMessage, type NewDelivery, type NewEvent, type RunEffects,
  type RunEnd, type SettleEffects,
} from './records.js';
import { toDelivery, type OutboxRow } from './rows.js';
import * as sql from './sql/index.js';
import { StoreError } from './store.js';

/** See Store.finishRun; `at`: when the conversation turns are stored. */
export async function finishRun(c: pg.ClientBase, runId: string, end: RunEnd, effects: RunEffects, at: string): Promise<void> {
  if (!ENDED_STATUSES.includes(end.status)) throw new StoreError('constraint', `a run cannot end with status ${String(end.status)}`);
  const { rows } = await c.query<{ session_key: string }>(
    sql.runs.finishRun.pg,
    [runId, end.status, end.endedAt, pgText(end.reply ?? null), pgText(end.error ?? null), end.errorCode ?? null, end.deliveredTo ?? null],
  );
  if (rows.length === 0) throw new StoreError('run_not_running', `run ${runId} is not running`);
  if (effects.summary) await insertEvents(c, [effects.summary]);
  if (effects.delivery) await insertOutbox(c, effects.delivery, runId);
  if (effects.callback) await insertCallback(c, effects.callback, runId);
  await appendTurns(c, rows[0]!.session_key, effects.history ?? [], at);
}

/** See Store.appendHistory; `at`: when the turns are stored. */
export async function appendHistory(
  c: pg.ClientBase, sessionKey: string, messages: HistoryMessage[], state: Record<string, string> | undefined, events: NewEvent[],
  delivery: NewDelivery | undefined, at: string,
): Promise<void> {
  await appendTurns(c, sessionKey, messages, at);
  await setState(c, state);
  await insertEvents(c, events);
  if (delivery) await insertOutbox(c, delivery, null);
}

async function appendTurns(c: pg.ClientBase, sessionKey: string, messages: readonly HistoryMessage[], at: string): Promise<void> {
  if (messages.length === 0) return;
  await c.query(sql.history.insertHistory.pg, [pgText(sessionKey), messages.map((m) => m.role), messages.map((m) => pgText(m.content)), at]);
}

/** Sets state keys (upsert). */
async function setState(c: pg.ClientBase, state: Record<string, string> | undefined): Promise<void> {
  const entries = Object.entries(state ?? {});
  if (entries.length === 0) return;
  await c.query(sql.history.setState.pg, [entries.map(([k]) => pgText(k)), entries.map(([, v]) => pgText(v))]);
}

/** See Store.claimDeliveries; `limit` already a LIMIT value (pgLimit), `instanceId`: who holds the leases. */
export async function claimDeliveries(
  c: pg.ClientBase, now: string, limit: number | null, leaseUntil: string, instanceId: string,
): Promise<{ deliveries: DeliveryRecord[]; nextAt?: string }> {
  const rows = limit === 0 ? [] : (await c.query<OutboxRow>(sql.outbox.claimOutbox.pg, [now, limit, leaseUntil, instanceId])).rows;
  rows.sort((a, b) => a.next_at.localeCompare(b.next_at) || a.id - b.id);
  const next = await c.query<{ at: string | null }>(sql.outbox.nextDue.pg);
  const nextAt = next.rows[0]?.at ?? undefined;
  const deliveries = rows.map(toDelivery);
  return nextAt === undefined ? { deliveries } : { deliveries, nextAt };
}

/** See Store.settleDelivery. */
export async function settleDelivery(c: pg.ClientBase, id: number, outcome: DeliveryOutcomeRecord, effects: SettleEffects): Promise<void> {
  const { rows } = await c.query<{ run_id: string | null }>(
    sql.outbox.settleDelivery.pg,
    [id, outcome.status, outcome.status === 'failed' ? pgText(outcome.error) : null, outcome.at],
  );
  if (rows.length === 0) throw new StoreError('constraint', `delivery ${id} is not pending`);
  const runId = rows[0]!.run_id;
  if (runId !== null && effects.run) {
    await c.query(
      sql.runs.settleRun.pg,
      [runId, effects.run.deliveredTo ?? null, pgText(effects.run.error ?? null), effects.run.errorCode ?? null,
        effects.run.status ?? null, effects.run.endedAt ?? null, effects.run.forwarded ? JSON.stringify(effects.run.forwarded) : null],
    );
  }
  if (effects.summary) await insertEvents(c, [effects.summary]);
  await setState(c, effects.state);
}
