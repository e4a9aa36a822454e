import type { Db } from './dialect.js';
import type { PurgeStep, PurgeTable } from './maintenance.js';
import { ENDED_STATUSES } from './records.js';

/**
 * Retention's statements (maintenance.ts), the one place the dialects differ in algorithm:
 * SQLite walks a window of rows in seq order and judges each (its writer thread holds no lock
 * long); PostgreSQL deletes at most $2 rows older than $1 in one statement. Seq is never reused.
 */
const PG: Record<PurgeTable | 'requests', string> = {
  events: 'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < $1 ORDER BY seq LIMIT $2)',
  history: 'DELETE FROM history WHERE seq IN (SELECT seq FROM history WHERE at < $1 ORDER BY seq LIMIT $2)',
  requests: 'DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE at < $1 ORDER BY seq LIMIT $2)',
  outbox: "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE run_id IS NULL AND status <> 'pending' AND created_at < $1 ORDER BY id LIMIT $2)",
  // A run goes once ended before the cut-off with no pending delivery, its outbox rows with it.
  runs: `WITH doomed AS (
      SELECT run_id FROM runs WHERE created_at < $1 AND status IN ('succeeded', 'failed', 'timed_out') AND ended_at < $1
        AND NOT EXISTS (SELECT 1 FROM outbox AS o WHERE o.run_id = runs.run_id AND o.status = 'pending')
      ORDER BY seq LIMIT $2),
    rows AS (DELETE FROM outbox WHERE run_id IN (SELECT run_id FROM doomed))
    DELETE FROM runs WHERE run_id IN (SELECT run_id FROM doomed)`,
};

interface WindowRow {
  seq: number;
  t: string | number | null;
  status?: string;
  ended_at?: string | null;
  pending?: number;
  run_id?: string | null;
}

const ended = new Set<string>(ENDED_STATUSES);

/** SQLite's window per table ($1 after, $2 rows), the delete of one row, and whether a row is old enough (`t` below the cut-off). */
const SQLITE: Record<PurgeTable | 'requests', { window: string; remove: string; old: (row: WindowRow, before: string) => boolean }> = {
  events: { window: 'SELECT seq, at AS t FROM events WHERE seq > $1 ORDER BY seq LIMIT $2', remove: 'DELETE FROM events WHERE seq = $1', old: () => true },
  requests: { window: 'SELECT seq, at AS t FROM requests WHERE seq > $1 ORDER BY seq LIMIT $2', remove: 'DELETE FROM requests WHERE seq = $1', old: () => true },
  // Turns without a time (stored before schema v3) are kept.
  history: { window: 'SELECT seq, at AS t FROM history WHERE seq > $1 ORDER BY seq LIMIT $2', remove: 'DELETE FROM history WHERE seq = $1', old: (r) => r.t !== null },
  runs: {
    window: `SELECT seq, created_at AS t, status, ended_at,
        EXISTS (SELECT 1 FROM outbox WHERE outbox.run_id = runs.run_id AND outbox.status = 'pending') AS pending
      FROM runs WHERE seq > $1 ORDER BY seq LIMIT $2`,
    remove: 'DELETE FROM runs WHERE seq = $1',
    old: (r, before) => ended.has(r.status!) && r.ended_at != null && r.ended_at < before && r.pending === 0,
  },
  outbox: {
    window: 'SELECT id AS seq, created_at AS t, status, run_id FROM outbox WHERE id > $1 ORDER BY id LIMIT $2',
    remove: 'DELETE FROM outbox WHERE id = $1',
    old: (r) => r.run_id === null && r.status !== 'pending',
  },
};
const REMOVE_RUN_OUTBOX = 'DELETE FROM outbox WHERE run_id = (SELECT run_id FROM runs WHERE seq = $1)';

/** One step of retention on `table`: at most `max` rows older than `before` (for events, in the ms they keep), from `after` on (SQLite's window). */
export async function purgeStep(db: Db, table: PurgeTable | 'requests', before: string, after: number, max: number): Promise<PurgeStep> {
  const cut = table === 'events' ? Date.parse(before) : before;
  if (db.kind === 'pg') {
    const deleted = await db.run(PG[table], [cut, max]);
    return deleted < max ? { deleted } : { deleted, next: after };
  }
  const { window, remove, old } = SQLITE[table];
  const rows = await db.all<WindowRow>(window, [after, max]);
  let deleted = 0;
  for (const row of rows) {
    if (row.t !== null && row.t >= cut) return { deleted };
    if (!old(row, before)) continue;
    if (table === 'runs') await db.run(REMOVE_RUN_OUTBOX, [row.seq]);
    deleted += await db.run(remove, [row.seq]);
  }
  return rows.length < max ? { deleted } : { deleted, next: rows[rows.length - 1]!.seq };
}
