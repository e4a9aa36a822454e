import { EVENT_COLUMNS } from '../rows.js';

/**
 * The statements on `events` (the main session's), both dialects side by side (see runs.ts;
 * why: store.ts). SQLite binds `?`, PostgreSQL `$n`.
 */

/**
 * An event, binding {@link EVENT_COLUMNS}: SQLite one row per statement; PostgreSQL a batch
 * through `unnest` of arrays of these types, under EVENTS_LOCK so that seq follows commit
 * order (postgres-writer.ts).
 */
export const insertEvent = {
  sqlite: `INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`,
  pgTypes: 'text, text, text, text, text, smallint',
};

/** Events after a seq, oldest first. */
export const listEvents = {
  sqlite: 'SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
  pg: 'SELECT * FROM events WHERE seq > $1 ORDER BY seq LIMIT $2',
};

/**
 * Retention (maintenance.ts). Seq is never reused (AUTOINCREMENT, an identity): the /events
 * cursor goes on. SQLite walks a window in seq order (sqlite-purge.ts); PostgreSQL deletes at
 * most $2 events older than $1, oldest first.
 */
export const purgeEvents = {
  sqlite: {
    window: 'SELECT seq, at AS t FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
    remove: 'DELETE FROM events WHERE seq = ?',
  },
  pg: 'DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE at < $1 ORDER BY seq LIMIT $2)',
};
