export const HISTORY_COLUMNS = 'session_key, role, content, at';
export const HISTORY_TYPES = 'text, text, text, text';

/** The last turns of a session, oldest first. */
export const readHistory = 'SELECT role, content FROM (SELECT seq, role, content FROM history WHERE session_key = $1 ORDER BY seq DESC LIMIT $2) AS h ORDER BY seq';

/** `Db.insert`'s tail for state keys: an upsert. */
export const setState = 'ON CONFLICT (key) DO UPDATE SET value = excluded.value';

export const getState = 'SELECT value FROM state WHERE key = $1';
