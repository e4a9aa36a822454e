import { insertInto, type Computed, type Sql } from '../dialect.js';
import { REQUEST_COLUMNS, REQUEST_LIST_COLUMNS } from '../rows.js';
import type { Bind } from '../rows.js';
import type { ListRequestsOptions } from '../records.js';

// The request log: the `requests` table and the rows folded into an event or run (rows.ts foldedRow), one seq for all, a listing their merge by seq.

/** The next request seq: past every one given, folded ones included (SQLite: one writer); PostgreSQL: the requests' own sequence. */
const NEXT_SEQ = {
  sqlite: `(SELECT coalesce(max(n), 0) + 1 FROM (SELECT max(seq) AS n FROM requests
    UNION ALL SELECT max(req_seq) FROM events WHERE req_seq IS NOT NULL UNION ALL SELECT max(req_seq) FROM runs WHERE req_seq IS NOT NULL))`,
  pg: "nextval(pg_get_serial_sequence('requests', 'seq'))",
};

export const FOLD_TYPES = 'integer, text, integer, integer, text, text, text, text, text, text';

/** req_seq of an accepted event's or run's row inserted with `columns`: drawn only when a request is folded into it (its req_status bound). */
export function foldedSeq(columns: string): Computed {
  const status = columns.split(',').map((c) => c.trim()).indexOf('req_status') + 1;
  return { column: 'req_seq', sqlite: `CASE WHEN $${status} IS NULL THEN NULL ELSE ${NEXT_SEQ.sqlite} END`, pg: `CASE WHEN req_status IS NULL THEN NULL ELSE ${NEXT_SEQ.pg} END` };
}

export const insertRequests = insertInto('requests', REQUEST_COLUMNS,
  'text, text, text, text, text, integer, double precision, text, text, smallint, text, text, text, text, text, bigint, text, text, text, text', '',
  { column: 'seq', ...NEXT_SEQ });

/** A folded row read as a `requests` row, each column of the type the requests' has (PostgreSQL merges only parts alike); decoded by rows.ts toRequest (req_lag set). */
const folded = (table: 'events' | 'runs', full: boolean) => {
  const [at, ids] = table === 'events' ? ['CAST(at AS TEXT) AS at', 'id AS event_ids, CAST(NULL AS TEXT) AS run_ids'] : ['created_at AS at', 'CAST(NULL AS TEXT) AS event_ids, run_id AS run_ids'];
  return `SELECT req_seq AS seq, ${at}, req_id AS request_id, req_method AS method, req_path AS path, req_route AS route, req_status AS status,
    CAST(req_ms AS DOUBLE PRECISION) AS ms, ${ids}, CAST(0 AS SMALLINT) AS replayed, CAST(NULL AS TEXT) AS error, req_type AS content_type, req_ua AS user_agent,
    CAST(NULL AS TEXT) AS body_until, CAST(NULL AS BIGINT) AS replay_of, req_sender AS sender, CAST(NULL AS TEXT) AS explain, CAST(NULL AS TEXT) AS failures,
    ${full ? 'CAST(NULL AS TEXT) AS body, CAST(NULL AS TEXT) AS head, ' : ''}req_lag FROM ${table}`;
};

export const getRequest = `SELECT ${REQUEST_LIST_COLUMNS}, body, head, CAST(NULL AS INTEGER) AS req_lag FROM requests WHERE seq = $1
  UNION ALL ${folded('events', true)} WHERE req_seq = $1
  UNION ALL ${folded('runs', true)} WHERE req_seq = $1`;

/** A listing of the log, newest first, without bodies; the LIMIT's value follows `values`. */
export function listRequests(opts: ListRequestsOptions): { text: Sql; values: Bind[] } {
  const values: Bind[] = [];
  const bind = (value: Bind) => `$${values.push(value)}`;
  const logged: string[] = [];
  const foldedToo: string[] = ['req_seq IS NOT NULL'];
  if (opts.before !== undefined) {
    const p = bind(opts.before);
    logged.push(`seq < ${p}`);
    foldedToo.push(`req_seq < ${p}`);
  }
  // Written as the indexes requests_class and requests_route_class are (schema v12).
  if (opts.statusClass !== undefined) logged.push(`status / 100 = ${bind(Math.trunc(opts.statusClass))}`);
  if (opts.route !== undefined) {
    const p = bind(opts.route);
    logged.push(`route = ${p}`);
    foldedToo.push(`req_route = ${p}`);
  }
  if (opts.replayOf !== undefined) logged.push(`replay_of = ${bind(opts.replayOf)}`);
  const limit = `$${values.length + 1}`;
  const where = (clauses: string[]) => (clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '');
  const parts = [`SELECT ${REQUEST_LIST_COLUMNS}, CAST(NULL AS INTEGER) AS req_lag FROM requests${where(logged)}`];
  // Only an accepted 2xx is folded, never a replay (rows.ts foldedRow).
  const folds = opts.replayOf === undefined && (opts.statusClass === undefined || Math.trunc(opts.statusClass) === 2);
  if (folds) parts.push(`${folded('events', false)}${where(foldedToo)}`, `${folded('runs', false)}${where(foldedToo)}`);
  return {
    text: {
      // SQLite merges the parts in seq order through their indexes (MERGE (UNION ALL)); PostgreSQL does so (Merge Append) for parts each ordered and limited.
      sqlite: `${parts.join(' UNION ALL ')} ORDER BY seq DESC LIMIT ${limit}`,
      pg: parts.length === 1 ? `${parts[0]} ORDER BY seq DESC LIMIT ${limit}`
        : `${parts.map((p, i) => `(${p} ORDER BY ${i === 0 ? 'seq' : 'req_seq'} DESC LIMIT ${limit})`).join(' UNION ALL ')} ORDER BY seq DESC LIMIT ${limit}`,
    },
    values,
  };
}

/** Drops at most $2 kept bodies (and their headers and query) due before $1, through the partial index. */
export const purgeBodies = 'UPDATE requests SET body = NULL, body_until = NULL, head = NULL WHERE seq IN (SELECT seq FROM requests WHERE body_until <= $1 ORDER BY body_until LIMIT $2)';
