import { RUN_COLUMNS } from '../rows.js';

/**
 * The statements on `runs`, both dialects side by side: one file per table, so that what a
 * claim, an end or a purge does reads in one place for SQLite and PostgreSQL alike (why so, and
 * not one builder for both: store.ts). SQLite binds `?` or `@name`, PostgreSQL `$n`.
 */

/**
 * A run with its delivery (the outbox row of its reply, if any: `run_id` is unique per kind
 * there) and its callback (docs/callbacks.md). A forward row (forward mode) is not a delivery:
 * the run shows its outcome as `forwarded`.
 */
const RUN_SELECT = `SELECT runs.*, o.status AS d_status, o.target AS d_target, o.attempts AS d_attempts, o.error AS d_error,
    c.status AS c_status, c.attempts AS c_attempts, c.error AS c_error
  FROM runs LEFT JOIN outbox AS o ON o.run_id = runs.run_id AND o.kind = 'run'
  LEFT JOIN outbox AS c ON c.run_id = runs.run_id AND c.kind = 'callback'`;

export const getRun = {
  sqlite: `${RUN_SELECT} WHERE runs.run_id = ?`,
  pg: `${RUN_SELECT} WHERE runs.run_id = $1`,
};

/** A run's place in acceptance order: where `listRuns({ before })` pages on from. */
export const runSeq = {
  sqlite: 'SELECT seq FROM runs WHERE run_id = ?',
  pg: 'SELECT seq FROM runs WHERE run_id = $1',
};

/** Newest first, below a seq. */
export const listRuns = {
  sqlite: `${RUN_SELECT} WHERE runs.seq < ? ORDER BY runs.seq DESC LIMIT ?`,
  pg: `${RUN_SELECT} WHERE runs.seq < $1 ORDER BY runs.seq DESC LIMIT $2`,
};

/** Newest first of one status, below a seq. */
export const listRunsWithStatus = {
  sqlite: `${RUN_SELECT} WHERE runs.status = ? AND runs.seq < ? ORDER BY runs.seq DESC LIMIT ?`,
  pg: `${RUN_SELECT} WHERE runs.status = $1 AND runs.seq < $2 ORDER BY runs.seq DESC LIMIT $3`,
};

export const countRuns = {
  sqlite: 'SELECT status, COUNT(*) AS n FROM runs GROUP BY status',
  pg: 'SELECT status, count(*) AS n FROM runs GROUP BY status',
};

/**
 * A queued run, binding {@link RUN_COLUMNS}: SQLite one row per statement; PostgreSQL a batch
 * in one statement, `unnest`ing one array per column of these types (postgres-writer.ts).
 */
export const insertRun = {
  // One placeholder per column, counted from the list, so that a new column cannot leave one out.
  sqlite: `INSERT INTO runs (status, ${RUN_COLUMNS}) VALUES ('queued'${', ?'.repeat(RUN_COLUMNS.split(',').length)})`,
  pgTypes: 'text, text, text, text, text, text, double precision, text, smallint, text, text, text, smallint, text, text, text',
};

/**
 * Moves the oldest claimable run of each session (none of its runs running) to `running`.
 *
 * SQLite: the claimable heads are the `ready` table, kept by triggers (sqlite-schema.ts v2). The
 * IN list is computed before the UPDATE runs, so the triggers' changes to `ready` do not
 * disturb it. One statement, and the writer is the only one writing, so two claims never
 * overlap.
 *
 * PostgreSQL: the oldest queued run of each session that has none running, oldest first,
 * locked for this claim; rows another claim holds are skipped, not waited for (SKIP LOCKED). A
 * run behind a queued predecessor is not a head, so a claim never takes two runs of a session,
 * and a concurrent claim that locked the head makes the others skip the whole session. Should
 * two claims still race (one commits between the other's snapshot and its lock), the partial
 * unique index runs_one_running refuses the second running run; that claim is retried. $3:
 * the claiming instance.
 */
export const claimRuns = {
  sqlite: `
    UPDATE runs SET status = 'running', started_at = @started_at
    WHERE seq IN (SELECT seq FROM ready ORDER BY seq LIMIT @limit)
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
 * {@link claimRuns} under flow rules (records.ts ClaimRules): the same heads, less those of
 * held sources; then, per limited source, its heads numbered oldest first (`k`) and taken
 * while k plus its runs already running stays within its limit. Used only when rules are
 * given, so a gateway without them claims with the statement above.
 *
 * SQLite binds `@held` (a JSON array) and `@limits` (a JSON object: source → limit).
 * PostgreSQL binds $4 held (text[]), $5 and $6 the limits' sources and values; the statement
 * runs after an advisory lock (postgres.ts) so that two instances' claims cannot both see a
 * free slot — a window function cannot be combined with FOR UPDATE, and SKIP LOCKED could not
 * see the other claim's rows anyway. Running runs of a source are few (at most its limit plus
 * agent.maxConcurrent per instance): the count walks the running runs' index.
 */
export const claimRunsWithRules = {
  sqlite: `
    UPDATE runs SET status = 'running', started_at = @started_at
    WHERE seq IN (
      SELECT h.seq FROM (
        SELECT ready.seq, runs.source, row_number() OVER (PARTITION BY runs.source ORDER BY ready.seq) AS k
        FROM ready JOIN runs ON runs.seq = ready.seq
        WHERE runs.source NOT IN (SELECT value FROM json_each(@held))
      ) AS h
      LEFT JOIN json_each(@limits) AS l ON l.key = h.source
      WHERE l.value IS NULL
         OR h.k + (SELECT count(*) FROM runs AS r WHERE r.status = 'running' AND r.source = h.source) <= l.value
      ORDER BY h.seq LIMIT @limit)
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
  /** Serialises rule-bound claims across instances (pg_advisory_xact_lock's key). */
  pgLock: "SELECT pg_advisory_xact_lock(hashtext('hookrelay.claim-rules'))",
};

/** Ends a running run; no row returned: it was not running. */
export const finishRun = {
  sqlite: `
    UPDATE runs SET status = @status, ended_at = @ended_at, reply = @reply, error = @error, error_code = @error_code,
      delivered_to = @delivered_to
    WHERE run_id = @run_id AND status = 'running'
    RETURNING session_key`,
  pg: `UPDATE runs SET status = $2, ended_at = $3, reply = $4, error = $5, error_code = $6, delivered_to = $7
         WHERE run_id = $1 AND status = 'running' RETURNING session_key`,
};

/** Puts running runs back to queued (SQLite: one run; PostgreSQL: an array of them). */
export const requeueRuns = {
  sqlite: "UPDATE runs SET status = 'queued', started_at = NULL WHERE run_id = ? AND status = 'running'",
  pg: "UPDATE runs SET status = 'queued', started_at = NULL WHERE run_id = ANY($1) AND status = 'running'",
};

/**
 * What settling its outbox row does to a run: its delivery's outcome; a forward row also ends
 * its (queued) run: status, ended_at and forwarded. NULL leaves a column as it is.
 */
export const settleRun = {
  sqlite: `
    UPDATE runs SET delivered_to = IFNULL(@delivered_to, delivered_to), error = IFNULL(@error, error),
      error_code = IFNULL(@error_code, error_code), status = IFNULL(@status, status), ended_at = IFNULL(@ended_at, ended_at),
      forwarded = IFNULL(@forwarded, forwarded)
    WHERE run_id = @run_id`,
  pg: `UPDATE runs SET delivered_to = COALESCE($2, delivered_to), error = COALESCE($3, error), error_code = COALESCE($4, error_code),
             status = COALESCE($5, status), ended_at = COALESCE($6, ended_at), forwarded = COALESCE($7, forwarded)
           WHERE run_id = $1`,
};

/**
 * Retention (maintenance.ts): a run goes once ended before the cut-off with no pending
 * delivery (its summary is yet to come), its outbox row with it. Queued and running runs stay.
 *
 * SQLite walks a window of runs in seq order (sqlite-purge.ts) and judges each row; PostgreSQL
 * deletes at most $2 runs ended before $1 (ISO), oldest first, in one statement.
 */
export const purgeRuns = {
  sqlite: {
    window: `SELECT seq, created_at AS t, status, ended_at,
        EXISTS (SELECT 1 FROM outbox WHERE outbox.run_id = runs.run_id AND outbox.status = 'pending') AS pending
      FROM runs WHERE seq > ? ORDER BY seq LIMIT ?`,
    remove: 'DELETE FROM runs WHERE seq = ?',
    removeOutbox: 'DELETE FROM outbox WHERE run_id = (SELECT run_id FROM runs WHERE seq = ?)',
  },
  pg: `WITH doomed AS (
      SELECT run_id FROM runs WHERE created_at < $1 AND status IN ('succeeded', 'failed', 'timed_out') AND ended_at < $1
        AND NOT EXISTS (SELECT 1 FROM outbox AS o WHERE o.run_id = runs.run_id AND o.status = 'pending')
      ORDER BY seq LIMIT $2),
    rows AS (DELETE FROM outbox WHERE run_id IN (SELECT run_id FROM doomed))
    DELETE FROM runs WHERE run_id IN (SELECT run_id FROM doomed)`,
};
