import { REQUEST_COLUMNS, REQUEST_LIST_COLUMNS } from '../request-rows.js';
import type { Bind } from '../rows.js';
import type { ListRequestsOptions } from '../records.js';

/**
 * The statements on `requests` (the request log, CONTRACT.md §11), both dialects side by side
 * (see runs.ts; why: store.ts). SQLite binds `?`, PostgreSQL `$n`.
 */

/**
 * A row, binding {@link REQUEST_COLUMNS}: SQLite one row per statement; PostgreSQL a batch
 * through `unnest` of arrays of these types (postgres-writer.ts), in the same order.
 */
export const insertRequest = {
  sqlite: `INSERT INTO requests (${REQUEST_COLUMNS}) VALUES (${REQUEST_COLUMNS.split(',').map(() => '?').join(', ')})`,
  pgTypes: 'text, text, text, text, text, integer, double precision, text, text, smallint, text, text, text, text, text, bigint, text, text',
};

export const getRequest = {
  sqlite: 'SELECT * FROM requests WHERE seq = ?',
  pg: 'SELECT * FROM requests WHERE seq = $1',
};

/**
 * A listing of the log, newest first, without bodies: its statement and values, with
 * `param(i)` spelling the i-th (0-based) placeholder (`?` in SQLite, `$n` in PostgreSQL). The
 * LIMIT's value is the caller's, after `values`.
 */
export function listRequests(opts: ListRequestsOptions, param: (i: number) => string): { text: string; values: Bind[] } {
  const clauses: string[] = [];
  const values: Bind[] = [];
  const add = (clause: (p: string) => string, value: Bind) => {
    clauses.push(clause(param(values.length)));
    values.push(value);
  };
  if (opts.before !== undefined) add((p) => `seq < ${p}`, opts.before);
  if (opts.statusClass !== undefined) {
    add((p) => `status >= ${p}`, opts.statusClass * 100);
    add((p) => `status < ${p}`, opts.statusClass * 100 + 100);
  }
  if (opts.route !== undefined) add((p) => `route = ${p}`, opts.route);
  if (opts.replayOf !== undefined) add((p) => `replay_of = ${p}`, opts.replayOf);
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  return { text: `SELECT ${REQUEST_LIST_COLUMNS} FROM requests ${where} ORDER BY seq DESC LIMIT ${param(values.length)}`, values };
}

/**
 * Retention of the log (maintenance.ts), like the other tables': SQLite walks a window in seq
 * order (sqlite-purge.ts) and stops at the first row too young; PostgreSQL deletes at most $2
 * rows older than $1, oldest first.
 */
export const purgeRequests = {
  sqlite: {
    window: 'SELECT seq, at AS t FROM requests WHERE seq > ? ORDER BY seq LIMIT ?',
    remove: 'DELETE FROM requests WHERE seq = ?',
  },
  pg: 'DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE at < $1 ORDER BY seq LIMIT $2)',
};

/** Drops at most the second value's number of kept bodies (and their kept headers and query) whose time (hooks.keepBodies) is past the first, through the partial index. */
export const purgeBodies = {
  sqlite: 'UPDATE requests SET body = NULL, body_until = NULL, head = NULL WHERE seq IN (SELECT seq FROM requests WHERE body_until <= ? ORDER BY body_until LIMIT ?)',
  pg: 'UPDATE requests SET body = NULL, body_until = NULL, head = NULL WHERE seq IN (SELECT seq FROM requests WHERE body_until <= $1 ORDER BY body_until LIMIT $2)',
};
