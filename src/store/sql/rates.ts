/**
 * The per-mapping rate window on PostgreSQL (ratePerMinute, CONTRACT.md §14), shared by every
 * instance: one row per admitted request, taken by the function of migration v6
 * (postgres-schema.ts) in one round trip. SQLite keeps the window in the process instead
 * (rate-window.ts): one gateway per store.
 *
 * `hookrelay_take_rate(key, limit)`: 0 when admitted (its row inserted), else the ms until one
 * more would be. It takes a transaction-level advisory lock on the key first, so that two
 * instances never both see the last free place; each statement of a VOLATILE plpgsql function
 * takes a new snapshot, so the count after the lock sees what the lock's holder committed. The
 * database's clock is the time, so instances with skewed clocks still share one window.
 */
export const takeRate = {
  pg: 'SELECT hookrelay_take_rate($1, $2) AS wait',
};

/**
 * Store.returnRate: deletes the key's newest row. SKIP LOCKED: two returns at once delete two
 * rows, not the same one twice (the second would find it gone and delete nothing).
 */
export const returnRate = {
  pg: `DELETE FROM rate_hits WHERE ctid = (
    SELECT ctid FROM rate_hits WHERE key = $1 ORDER BY at DESC LIMIT 1 FOR UPDATE SKIP LOCKED
  )`,
};
