/** The rate window on PostgreSQL (CONTRACT.md §14), shared by every instance: `hookrelay_take_rate` (migration v6) takes an advisory lock on the key and counts by the database's clock. */
export const takeRate = 'SELECT hookrelay_take_rate($1, $2) AS wait';

/** Store.returnRate: deletes the key's newest row. */
export const returnRate = `DELETE FROM rate_hits WHERE ctid = (
    SELECT ctid FROM rate_hits WHERE key = $1 ORDER BY at DESC LIMIT 1 FOR UPDATE SKIP LOCKED
  )`;
