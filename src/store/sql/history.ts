/**
 * The statements on `history` (conversation turns) and `state` (small durable values), both
 * dialects side by side (see runs.ts; why: store.ts). SQLite binds `?`, PostgreSQL `$n`.
 */

/**
 * Conversation turns. SQLite: one per statement (session, role, content, at). PostgreSQL: a
 * session's turns in one statement, in order ($2 roles, $3 contents, $4 at).
 */
export const insertHistory = {
  sqlite: 'INSERT INTO history (session_key, role, content, at) VALUES (?, ?, ?, ?)',
  pg: `INSERT INTO history (session_key, role, content, at)
       SELECT $1, role, content, $4 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS m(role, content, ord) ORDER BY ord`,
};

/** The last turns of a session, oldest first. */
export const readHistory = {
  sqlite: 'SELECT role, content FROM (SELECT seq, role, content FROM history WHERE session_key = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq',
  pg: 'SELECT role, content FROM (SELECT seq, role, content FROM history WHERE session_key = $1 ORDER BY seq DESC LIMIT $2) AS h ORDER BY seq',
};

/**
 * Retention (maintenance.ts). SQLite walks a window in seq order (sqlite-purge.ts); turns
 * without a time (none since schema v3) stop nothing and are kept. PostgreSQL deletes at most
 * $2 turns older than $1, oldest first.
 */
export const purgeHistory = {
  sqlite: {
    window: 'SELECT seq, at AS t FROM history WHERE seq > ? ORDER BY seq LIMIT ?',
    remove: 'DELETE FROM history WHERE seq = ?',
  },
  pg: 'DELETE FROM history WHERE seq IN (SELECT seq FROM history WHERE at < $1 ORDER BY seq LIMIT $2)',
};

/** Sets state keys (upsert): SQLite one key per statement, PostgreSQL arrays of keys ($1) and values ($2). */
export const setState = {
  sqlite: 'INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  pg: `INSERT INTO state (key, value) SELECT * FROM unnest($1::text[], $2::text[])
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
};

export const getState = {
  sqlite: 'SELECT value FROM state WHERE key = ?',
  pg: 'SELECT value FROM state WHERE key = $1',
};
