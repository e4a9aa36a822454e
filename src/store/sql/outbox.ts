import { OUTBOX_COLUMNS } from '../rows.js';

/**
 * The statements on `outbox` (CONTRACT.md §9), both dialects side by side (see runs.ts; why:
 * store.ts). SQLite binds `?` or `@name`, PostgreSQL `$n`.
 */

/**
 * A pending row, due at once, binding {@link OUTBOX_COLUMNS}: SQLite one row per statement;
 * PostgreSQL through `unnest` of arrays of these types (postgres-writer.ts).
 */
export const insertOutbox = {
  sqlite: `INSERT INTO outbox (status, ${OUTBOX_COLUMNS}) VALUES ('pending', ?, ?, ?, ?, ?, ?, ?)`,
  pgTypes: 'text, text, text, text, integer, text, text',
};

/**
 * Pending rows due now whose lease has ended (or was never taken), oldest due first: one more
 * attempt each and a lease. The partial index outbox_due holds exactly the pending rows, in due
 * order. PostgreSQL skips rows another claim holds and names the claiming instance ($4).
 */
export const claimOutbox = {
  sqlite: `
    UPDATE outbox SET attempts = attempts + 1, lease_until = @lease
    WHERE id IN (
      SELECT id FROM outbox WHERE status = 'pending' AND next_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY next_at LIMIT @limit)
    RETURNING *`,
  pg: `UPDATE outbox SET attempts = attempts + 1, lease_until = $3, instance = $4
  WHERE id IN (
    SELECT id FROM outbox WHERE status = 'pending' AND next_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
    ORDER BY next_at LIMIT $2
    FOR UPDATE SKIP LOCKED)
  RETURNING *`,
};

/** When the next pending row can be claimed: its due time, or its lease's end if later. */
export const nextDue = {
  sqlite: "SELECT MIN(MAX(next_at, IFNULL(lease_until, ''))) AS at FROM outbox WHERE status = 'pending'",
  pg: "SELECT MIN(GREATEST(next_at, COALESCE(lease_until, ''))) AS at FROM outbox WHERE status = 'pending'",
};

/** Part `part` (0-based) of a pending row was accepted by the provider; idempotent. */
export const ackPart = {
  sqlite: "UPDATE outbox SET parts_sent = MAX(parts_sent, @part + 1) WHERE id = @id AND status = 'pending' AND parts > @part",
  pg: "UPDATE outbox SET parts_sent = GREATEST(parts_sent, $2 + 1) WHERE id = $1 AND status = 'pending' AND parts > $2",
};

/** Another attempt at a later time, the lease released. */
export const retryDelivery = {
  sqlite: "UPDATE outbox SET next_at = @at, error = @error, lease_until = NULL WHERE id = @id AND status = 'pending'",
  pg: "UPDATE outbox SET next_at = $2, error = $3, lease_until = NULL WHERE id = $1 AND status = 'pending'",
};

/** Settles a pending row; no row returned: it was not pending (a delivery settles once). */
export const settleDelivery = {
  sqlite: `
    UPDATE outbox SET status = @status, error = @error, settled_at = @at, lease_until = NULL
    WHERE id = @id AND status = 'pending'
    RETURNING run_id`,
  pg: `UPDATE outbox SET status = $2, error = $3, settled_at = $4, lease_until = NULL
         WHERE id = $1 AND status = 'pending' RETURNING run_id`,
};

/**
 * SQLite, at open: the data directory is ours (locked), so outbox leases were taken by a
 * process that has stopped, and its pending deliveries are claimable at once rather than after
 * the lease. (PostgreSQL releases per instance: instances.ts.)
 */
export const releaseLeases = {
  sqlite: "UPDATE outbox SET lease_until = NULL WHERE status = 'pending' AND lease_until IS NOT NULL",
};

/**
 * Retention (maintenance.ts): a run's row goes with its run (runs.ts); heartbeat rows once
 * settled. SQLite walks a window in id order (sqlite-purge.ts); PostgreSQL deletes at most $2
 * rows created before $1, oldest first.
 */
export const purgeOutbox = {
  sqlite: {
    window: 'SELECT id AS seq, created_at AS t, status, run_id FROM outbox WHERE id > ? ORDER BY id LIMIT ?',
    remove: 'DELETE FROM outbox WHERE id = ?',
  },
  pg: "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE run_id IS NULL AND status <> 'pending' AND created_at < $1 ORDER BY id LIMIT $2)",
};
