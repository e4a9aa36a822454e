/** PostgreSQL only: several instances on one database (CONTRACT.md §10), each with a lease; a survivor takes over what one whose lease has expired held. */

/** Registers or renews instance $1's lease: alive until $2 seconds from now (the database's clock, one for all). */
export const renewLease = `INSERT INTO instances (id, started_at, lease_until) VALUES ($1, now(), now() + make_interval(secs => $2))
     ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`;

/** The other live instances (lease not expired) than $1, oldest first: what a starting instance joins. */
export const otherLiveInstances = 'SELECT id FROM instances WHERE id <> $1 AND lease_until > now() ORDER BY started_at, id';

/** No live instance row holds `instance` (of the enclosing row): its instance is gone (or it never had one). */
const GONE = 'NOT EXISTS (SELECT 1 FROM instances AS i WHERE i.id = instance AND i.lease_until > now())';

/** Running runs of gone instances ({@link GONE}), taken over by instance $1, at most $2. */
export const takeOverRuns = `UPDATE runs SET instance = $1
  WHERE seq IN (
    SELECT seq FROM runs WHERE status = 'running' AND instance IS DISTINCT FROM $1 AND ${GONE}
    ORDER BY seq LIMIT $2
    FOR UPDATE SKIP LOCKED)
  AND ${GONE}
  RETURNING *`;

/** Outbox leases of gone instances, released (their rows are claimable at once); $1: this instance. */
export const releaseGoneLeases = `UPDATE outbox SET lease_until = NULL, instance = NULL
  WHERE status = 'pending' AND instance IS NOT NULL AND instance <> $1 AND ${GONE}`;

/** Rows of instances gone for a day are history: nothing can still name them as live. */
export const forgetGoneInstances = "DELETE FROM instances WHERE lease_until < now() - interval '1 day'";

/** A graceful stop of instance $1: its outbox leases released, then its row (others take over at once, not after the lease). */
export const releaseOwnLeases = "UPDATE outbox SET lease_until = NULL, instance = NULL WHERE instance = $1 AND status = 'pending'";
export const removeInstance = 'DELETE FROM instances WHERE id = $1';
