/**
 * Retention's write ops in the embedded store's writer thread: one short step per call, which
 * maintenance.ts repeats until a table holds nothing more that is old enough.
 */
import type Database from 'better-sqlite3';
import type { PurgeStep, PurgeTable } from './maintenance.js';
import { ENDED_STATUSES } from './records.js';
import * as sql from './sql/index.js';

/** A row of a purge window: its place (`seq`, the outbox's id) and the time that ages it. */
interface WindowRow {
  seq: number;
  t: string | null;
}

type RunWindowRow = WindowRow & { status: string; ended_at: string | null; pending: number };
type OutboxWindowRow = WindowRow & { status: string; run_id: string | null };

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
export function purgeSteps(db: Database.Database): Record<PurgeTable | 'requests', (before: string, after: number, max: number) => PurgeStep> {
  const removeRunOutbox = db.prepare(sql.runs.purgeRuns.sqlite.removeOutbox);
  const ended = new Set<string>(ENDED_STATUSES);
  const step = <R extends WindowRow>(sql: { window: string; remove: string }, old: (row: R, before: string) => boolean) => {
    const window = db.prepare<[number, number], R>(sql.window);
    const remove = db.prepare(sql.remove);
    return (before: string, after: number, max: number): PurgeStep => {
      const rows = window.all(after, max);
      let deleted = 0;
      for (const row of rows) {
        if (row.t !== null && row.t >= before) return { deleted };
        if (old(row, before)) deleted += remove.run(row.seq).changes;
      }
      return rows.length < max ? { deleted } : { deleted, next: rows[rows.length - 1]!.seq };
    };
  };
  return {
    events: step(sql.events.purgeEvents.sqlite, () => true),
    requests: step(sql.requests.purgeRequests.sqlite, () => true),
    history: step(sql.history.purgeHistory.sqlite, (row) => row.t !== null),
    runs: step<RunWindowRow>(sql.runs.purgeRuns.sqlite, (row, before) => {
      const old = ended.has(row.status) && row.ended_at !== null && row.ended_at < before && row.pending === 0;
      if (old) removeRunOutbox.run(row.seq);
      return old;
    }),
    // A run's row goes with its run (above); heartbeat rows once settled.
    outbox: step<OutboxWindowRow>(sql.outbox.purgeOutbox.sqlite, (row) => row.run_id === null && row.status !== 'pending'),
  };
}
