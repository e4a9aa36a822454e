import { insertInto } from '../dialect.js';
import { REQUEST_COLUMNS, REQUEST_LIST_COLUMNS } from '../rows.js';
import type { Bind } from '../rows.js';
import type { ListRequestsOptions } from '../records.js';

export const insertRequests = insertInto('requests', REQUEST_COLUMNS,
  'text, text, text, text, text, integer, double precision, text, text, smallint, text, text, text, text, text, bigint, text, text, text, text');

export const getRequest = 'SELECT * FROM requests WHERE seq = $1';

/** A listing of the log, newest first, without bodies; the LIMIT's value follows `values`. */
export function listRequests(opts: ListRequestsOptions): { text: string; values: Bind[] } {
  const clauses: string[] = [];
  const values: Bind[] = [];
  const add = (clause: (p: string) => string, value: Bind) => {
    values.push(value);
    clauses.push(clause(`$${values.length}`));
  };
  if (opts.before !== undefined) add((p) => `seq < ${p}`, opts.before);
  // Written as the indexes requests_class and requests_route_class are (schema v12).
  if (opts.statusClass !== undefined) add((p) => `status / 100 = ${p}`, Math.trunc(opts.statusClass));
  if (opts.route !== undefined) add((p) => `route = ${p}`, opts.route);
  if (opts.replayOf !== undefined) add((p) => `replay_of = ${p}`, opts.replayOf);
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  return { text: `SELECT ${REQUEST_LIST_COLUMNS} FROM requests ${where} ORDER BY seq DESC LIMIT $${values.length + 1}`, values };
}

/** Drops at most $2 kept bodies (and their headers and query) due before $1, through the partial index. */
export const purgeBodies = 'UPDATE requests SET body = NULL, body_until = NULL, head = NULL WHERE seq IN (SELECT seq FROM requests WHERE body_until <= $1 ORDER BY body_until LIMIT $2)';
