import { EVENT_COLUMNS } from '../rows.js';

/**
 * Flow control's statements (CONTRACT.md §14, docs/flow-control.md), both dialects side by
 * side (why: store.ts): the paused mappings (`paused`, by mapping id) and the wakes they hold
 * (`held_events`, by source `mapping:<id>`, in acceptance order). A held wake is not an event:
 * `GET /events` and the heartbeat never see it until it is released into `events`, where it
 * gets its seq. Held runs need no table: they are queued runs that the claim leaves alone
 * (runs.ts claimRunsWithRules).
 */

export const pause = {
  sqlite: 'INSERT OR IGNORE INTO paused (mapping, at) VALUES (?, ?)',
  pg: 'INSERT INTO paused (mapping, at) VALUES ($1, $2) ON CONFLICT (mapping) DO NOTHING',
};

export const resume = {
  sqlite: 'DELETE FROM paused WHERE mapping = ?',
  pg: 'DELETE FROM paused WHERE mapping = $1',
};

/** What a gateway polls: the paused mapping ids, and the sources that hold wakes. Both tables are tiny. */
export const flowState = {
  sqlite: "SELECT mapping AS name, 'paused' AS what FROM paused UNION ALL SELECT DISTINCT source, 'held' FROM held_events",
  pg: "SELECT mapping AS name, 'paused' AS what FROM paused UNION ALL SELECT DISTINCT source, 'held' FROM held_events",
};

/** A held wake, binding EVENT_COLUMNS like events.insertEvent (PostgreSQL: the same unnest batch). */
export const insertHeld = {
  sqlite: `INSERT INTO held_events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`,
};

/**
 * Moves a source's held wakes into `events`, oldest first, in one transaction. PostgreSQL: under
 * the events lock (postgres-writer.ts), and DELETE … RETURNING, so that two instances releasing
 * at once move each wake once (the second waits for the first's row locks, then finds none).
 */
export const releaseWakes = {
  sqlite: {
    move: `INSERT INTO events (${EVENT_COLUMNS}) SELECT ${EVENT_COLUMNS} FROM held_events WHERE source = ? ORDER BY seq`,
    remove: 'DELETE FROM held_events WHERE source = ?',
  },
  pg: `WITH moved AS (DELETE FROM held_events WHERE source = $1 RETURNING seq, ${EVENT_COLUMNS})
    INSERT INTO events (${EVENT_COLUMNS}) SELECT ${EVENT_COLUMNS} FROM moved ORDER BY seq`,
};

/** `hookrelay_mapping_held`: held wakes, and queued runs of paused mappings, per source. */
export const countHeld = {
  sqlite: `SELECT source, count(*) AS n FROM held_events GROUP BY source
    UNION ALL SELECT source, count(*) AS n FROM runs WHERE status = 'queued' AND source IN (SELECT 'mapping:' || mapping FROM paused) GROUP BY source`,
  pg: `SELECT source, count(*) AS n FROM held_events GROUP BY source
    UNION ALL SELECT source, count(*) AS n FROM runs WHERE status = 'queued' AND source IN (SELECT 'mapping:' || mapping FROM paused) GROUP BY source`,
};
