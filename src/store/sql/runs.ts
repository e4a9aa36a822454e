import { insertInto } from '../dialect.js';
import { FOLD_COLUMNS, RUN_COLUMNS } from '../rows.js';
import { FOLD_TYPES, foldedSeq } from './requests.js';

const INSERTED_COLUMNS = `status, ${RUN_COLUMNS}, ${FOLD_COLUMNS}`;
export const insertRuns = insertInto('runs', INSERTED_COLUMNS,
  `text, text, text, text, text, text, text, double precision, text, smallint, text, text, text, smallint, text, text, text, ${FOLD_TYPES}`, '',
  foldedSeq(INSERTED_COLUMNS));

/**
 * A run with its delivery (the outbox row of its reply) and its callback (docs/callbacks.md).
 * A forward row is not a delivery: the run shows its outcome as `forwarded`.
 */
const RUN_SELECT = `SELECT runs.*, o.status AS d_status, o.target AS d_target, o.attempts AS d_attempts, o.error AS d_error,
    c.status AS c_status, c.attempts AS c_attempts, c.error AS c_error
  FROM runs LEFT JOIN outbox AS o ON o.run_id = runs.run_id AND o.kind = 'run'
  LEFT JOIN outbox AS c ON c.run_id = runs.run_id AND c.kind = 'callback'`;

export const getRun = `${RUN_SELECT} WHERE runs.run_id = $1`;
export const runSeq = 'SELECT seq FROM runs WHERE run_id = $1';
export const listRuns = `${RUN_SELECT} WHERE runs.seq < $1 ORDER BY runs.seq DESC LIMIT $2`;
export const listRunsWithStatus = `${RUN_SELECT} WHERE runs.status = $3 AND runs.seq < $1 ORDER BY runs.seq DESC LIMIT $2`;

/**
 * Moves the oldest claimable run of each session (none of its runs running) to `running`:
 * $1 at most, $2 started at, $3 the claiming instance.
 *
 * SQLite: the claimable heads are the `ready` table, kept by triggers (sqlite-schema.ts v2),
 * and the writer thread is the only writer, so two claims never overlap.
 *
 * PostgreSQL: rows another claim holds are skipped (SKIP LOCKED); a run behind a queued
 * predecessor is not a head. Should two claims still race, the partial unique index
 * runs_one_running refuses the second running run, and that claim is retried.
 */
export const claimRuns = {
  sqlite: `UPDATE runs SET status = 'running', started_at = $2
    WHERE seq IN (SELECT seq FROM ready ORDER BY seq LIMIT $1)
    RETURNING *`,
  pg: `UPDATE runs SET status = 'running', started_at = $2, instance = $3
  WHERE seq IN (
    SELECT q.seq FROM runs AS q
    WHERE q.status = 'queued'
      AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.session_key = q.session_key AND r.status = 'running')
      AND NOT EXISTS (SELECT 1 FROM runs AS p WHERE p.session_key = q.session_key AND p.status = 'queued' AND p.seq < q.seq)
    ORDER BY q.seq LIMIT $1
    FOR UPDATE SKIP LOCKED)
  RETURNING *`,
};

/**
 * {@link claimRuns} under flow rules (records.ts ClaimRules): the heads of sources not held,
 * numbered oldest first per source (`k`) and taken while k plus the source's running runs
 * stays within its limit. SQLite binds $4 held and $5 limits as JSON; PostgreSQL $4 held,
 * $5 and $6 the limits' sources and values as arrays, after {@link claimLock}: a window
 * function cannot be combined with FOR UPDATE.
 */
export const claimRunsWithRules = {
  sqlite: `UPDATE runs SET status = 'running', started_at = $2
    WHERE seq IN (
      SELECT h.seq FROM (
        SELECT ready.seq, runs.source, row_number() OVER (PARTITION BY runs.source ORDER BY ready.seq) AS k
        FROM ready JOIN runs ON runs.seq = ready.seq
        WHERE runs.source NOT IN (SELECT value FROM json_each($4))
      ) AS h
      LEFT JOIN json_each($5) AS l ON l.key = h.source
      WHERE l.value IS NULL
         OR h.k + (SELECT count(*) FROM runs AS r WHERE r.status = 'running' AND r.source = h.source) <= l.value
      ORDER BY h.seq LIMIT $1)
    RETURNING *`,
  pg: `UPDATE runs SET status = 'running', started_at = $2, instance = $3
  WHERE status = 'queued' AND seq IN (
    SELECT h.seq FROM (
      SELECT q.seq, q.source, row_number() OVER (PARTITION BY q.source ORDER BY q.seq) AS k
      FROM runs AS q
      WHERE q.status = 'queued' AND q.source <> ALL($4::text[])
        AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.session_key = q.session_key AND r.status = 'running')
        AND NOT EXISTS (SELECT 1 FROM runs AS p WHERE p.session_key = q.session_key AND p.status = 'queued' AND p.seq < q.seq)
    ) AS h
    LEFT JOIN unnest($5::text[], $6::int[]) AS l(source, lim) ON l.source = h.source
    WHERE l.lim IS NULL
       OR h.k + (SELECT count(*) FROM runs AS r WHERE r.status = 'running' AND r.source = h.source) <= l.lim
    ORDER BY h.seq LIMIT $1)
  RETURNING *`,
};

/** Serialises rule-bound claims across PostgreSQL instances. */
export const claimLock = "SELECT pg_advisory_xact_lock(hashtext('hookrelay.claim-rules'))";

/** Ends a running run; no row returned: it was not running. */
export const finishRun = `UPDATE runs SET status = $2, ended_at = $3, reply = $4, error = $5, error_code = $6, delivered_to = $7
  WHERE run_id = $1 AND status = 'running' RETURNING session_key`;

export const requeueRun = "UPDATE runs SET status = 'queued', started_at = NULL WHERE run_id = $1 AND status = 'running'";

/** What settling its outbox row does to a run (a forward row also ends it); NULL leaves a column as it is. */
export const settleRun = `UPDATE runs SET delivered_to = COALESCE($2, delivered_to), error = COALESCE($3, error), error_code = COALESCE($4, error_code),
    status = COALESCE($5, status), ended_at = COALESCE($6, ended_at), forwarded = COALESCE($7, forwarded)
  WHERE run_id = $1`;
