import { insertInto } from '../dialect.js';

export const insertHistory = insertInto('history', 'session_key, role, content, at', 'text, text, text, text');

/** The last turns of a session, oldest first. */
export const readHistory = 'SELECT role, content FROM (SELECT seq, role, content FROM history WHERE session_key = $1 ORDER BY seq DESC LIMIT $2) AS h ORDER BY seq';

export const setState = insertInto('state', 'key, value', 'text, text', 'ON CONFLICT (key) DO UPDATE SET value = excluded.value');

export const getState = 'SELECT value FROM state WHERE key = $1';

/** A state key kept only when none is there yet (a sender's secret: store.ts keepHookSecret). */
export const keepState = 'INSERT INTO state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING';
export const replaceState = 'INSERT INTO state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value';
