import { insertInto } from '../dialect.js';
import { EVENT_COLUMNS } from '../rows.js';
import { EVENT_TYPES } from './events.js';

/**
 * Flow control (CONTRACT.md §14, docs/flow-control.md): the paused mappings, and the wakes
 * they hold (`held_events`, by source `mapping:<id>`), which get their events seq only when
 * released. Held runs need no table: the claim leaves them queued (runs.ts).
 */
export const insertHeld = insertInto('held_events', EVENT_COLUMNS, EVENT_TYPES);

export const pause = 'INSERT INTO paused (mapping, at) VALUES ($1, $2) ON CONFLICT (mapping) DO NOTHING';
export const resume = 'DELETE FROM paused WHERE mapping = $1';

/** The paused mappings, and the sources holding wakes (counted in sql/tallies.ts). */
export const flowState = "SELECT mapping AS name, 'paused' AS what FROM paused UNION ALL SELECT source, 'held' FROM tallies WHERE what = 'held' GROUP BY source HAVING sum(n) > 0";

/**
 * Moves a source's held wakes into `events`, oldest first. PostgreSQL: DELETE … RETURNING, so
 * that two instances releasing at once move each wake once (the second waits on the rows' locks).
 */
export const releaseWakes = {
  sqlite: `INSERT INTO events (${EVENT_COLUMNS}) SELECT ${EVENT_COLUMNS} FROM held_events WHERE source = $1 ORDER BY seq`,
  pg: `WITH moved AS (DELETE FROM held_events WHERE source = $1 RETURNING seq, ${EVENT_COLUMNS})
    INSERT INTO events (${EVENT_COLUMNS}) SELECT ${EVENT_COLUMNS} FROM moved ORDER BY seq`,
};
export const removeReleased = 'DELETE FROM held_events WHERE source = $1';

