import { insertInto } from '../dialect.js';
import { KEY_COLUMNS } from '../rows.js';

/**
 * Inserts idempotency keys (CONTRACT.md §8), $6 the window's start: a key already held is no
 * error, an expired one not yet purged is taken over, and RETURNING gives only the keys this
 * transaction now holds.
 */
export const claimKeys = insertInto('idempotency', KEY_COLUMNS, 'text, text, integer, text, text', `ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status, body = excluded.body, at = excluded.at
  WHERE idempotency.at < $6 RETURNING key`);

export const findKey = 'SELECT request_hash AS "requestHash", status, body, at FROM idempotency WHERE key = $1 AND at >= $2';

/** At most $2 keys accepted before $1, oldest first by the `at` index. */
export const purgeKeys = 'DELETE FROM idempotency WHERE key IN (SELECT key FROM idempotency WHERE at < $1 ORDER BY at LIMIT $2)';
