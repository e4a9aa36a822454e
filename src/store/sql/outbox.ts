import { insertInto } from '../dialect.js';
import { OUTBOX_COLUMNS } from '../rows.js';

export const insertOutbox = insertInto('outbox', `status, ${OUTBOX_COLUMNS}`, 'text, text, text, text, text, integer, text, text');

/**
 * Pending rows due at $1 whose lease has ended (or was never taken), oldest due first: one more
 * attempt each and a lease until $3. PostgreSQL skips rows another claim holds and names the
 * claiming instance ($4). The partial index outbox_due holds exactly the pending rows.
 */
export const claimOutbox = {
  sqlite: `UPDATE outbox SET attempts = attempts + 1, lease_until = $3
    WHERE id IN (
      SELECT id FROM outbox WHERE status = 'pending' AND next_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
      ORDER BY next_at LIMIT $2)
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

export const ackPart = {
  sqlite: "UPDATE outbox SET parts_sent = MAX(parts_sent, $2 + 1) WHERE id = $1 AND status = 'pending' AND parts > $2",
  pg: "UPDATE outbox SET parts_sent = GREATEST(parts_sent, $2 + 1) WHERE id = $1 AND status = 'pending' AND parts > $2",
};

export const retryDelivery = "UPDATE outbox SET next_at = $2, error = $3, lease_until = NULL WHERE id = $1 AND status = 'pending'";

/** No row returned: it was not pending (a delivery settles once). */
export const settleDelivery = `UPDATE outbox SET status = $2, error = $3, settled_at = $4, lease_until = NULL
  WHERE id = $1 AND status = 'pending' RETURNING run_id`;

/** SQLite at open: the data directory is ours (locked), so every lease is the process before's. */
export const releaseLeases = "UPDATE outbox SET lease_until = NULL WHERE status = 'pending' AND lease_until IS NOT NULL";
