import { KEY_COLUMNS } from '../rows.js';

/**
 * The statements on `idempotency` (keys, CONTRACT.md §8), both dialects side by side (see
 * runs.ts; why: store.ts). SQLite binds `?`, PostgreSQL `$n`.
 */

/**
 * Claims keys, binding {@link KEY_COLUMNS}, then the window's start: a key already held is no
 * error (the request that brings it again is answered with the first answer, and the batch it
 * shares must commit), and an expired key that the purge has not reached yet is taken over.
 * SQLite: one key per statement (`changes` tells whether it was claimed). PostgreSQL: a batch
 * of distinct keys in one statement, RETURNING the keys this transaction now holds (new or
 * taken over); a live key is left alone and not returned.
 */
export const claimKeys = {
  sqlite: `INSERT INTO idempotency (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET
      request_hash = excluded.request_hash, status = excluded.status, body = excluded.body, at = excluded.at
    WHERE idempotency.at < ?`,
  pg: `INSERT INTO idempotency (${KEY_COLUMNS}) SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::text[], $5::text[])
       ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status, body = excluded.body, at = excluded.at
       WHERE idempotency.at < $6
       RETURNING key`,
};

/** Stored answers of keys accepted at or after a time: SQLite one key, PostgreSQL an array of them. */
export const findKeys = {
  sqlite: 'SELECT request_hash, status, body, at FROM idempotency WHERE key = ? AND at >= ?',
  pg: 'SELECT key, request_hash, status, body, at FROM idempotency WHERE key = ANY($1) AND at >= $2',
};

/** Deletes at most $2 (the second value) keys accepted before the first, oldest first by the `at` index (maintenance.ts). */
export const purgeKeys = {
  sqlite: 'DELETE FROM idempotency WHERE key IN (SELECT key FROM idempotency WHERE at < ? ORDER BY at LIMIT ?)',
  pg: 'DELETE FROM idempotency WHERE key IN (SELECT key FROM idempotency WHERE at < $1 ORDER BY at LIMIT $2)',
};
