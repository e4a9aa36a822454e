import { insertInto } from '../dialect.js';
import { EVENT_COLUMNS, FOLD_COLUMNS } from '../rows.js';
import { FOLD_TYPES, foldedSeq } from './requests.js';
import { SQLITE_HELD_TALLY } from './tallies.js';

/** The PostgreSQL types of EVENT_COLUMNS. */
export const EVENT_TYPES = 'text, text, text, text, bigint, smallint';

export const insertEvents = insertInto('events', EVENT_COLUMNS, EVENT_TYPES);

/** Accepted events, each with its request's folded columns or NULLs (rows.ts foldedRow). */
const ACCEPTED_COLUMNS = `${EVENT_COLUMNS}, ${FOLD_COLUMNS}`;
export const insertAccepted = insertInto('events', ACCEPTED_COLUMNS, `${EVENT_TYPES}, ${FOLD_TYPES}`, '', foldedSeq(ACCEPTED_COLUMNS));

export const listEvents = 'SELECT * FROM events WHERE seq > $1 ORDER BY seq LIMIT $2';

/**
 * PostgreSQL takes this transaction-scoped advisory lock before inserting events, so that seq is
 * handed out in commit order: a reader paging with `after` never skips a later-committed event.
 */
export const EVENTS_LOCK = 0x686f6f6b65766e74n; // "hookevnt"
export const lockEvents = `SELECT pg_advisory_xact_lock(${EVENTS_LOCK})`;

/** The LISTEN/NOTIFY channel of `now` triggers, for the heartbeat leader (postgres-leader.ts). */
export const HEARTBEAT_CHANNEL = 'hookrelay_heartbeat';

const sqliteMs = (t: string) => `CAST(round((julianday(${t}) - 2440587.5) * 86400000) AS INTEGER)`;
const REQ = 'req_seq, req_lag, req_route, req_status, req_ms, req_method, req_path, req_id, req_type, req_ua, req_sender';

/** SQLite v15: `at` of events and held wakes in ms (exact for toISOString's form, https://www.sqlite.org/lang_datefunc.html), rebuilt as in v11; never to change. */
export const SQLITE_AT_MS = `
  CREATE TABLE events_v15 (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('wake', 'summary', 'reply')), text TEXT NOT NULL,
    source TEXT NOT NULL, at INTEGER NOT NULL, unsafe INTEGER NOT NULL CHECK (unsafe IN (0, 1)), req_seq INTEGER, req_lag INTEGER, req_route TEXT,
    req_status INTEGER, req_ms INTEGER, req_method TEXT, req_path TEXT, req_id TEXT, req_type TEXT, req_ua TEXT, req_sender TEXT
  ) STRICT;
  INSERT INTO events_v15 (seq, id, kind, text, source, at, unsafe, ${REQ}) SELECT seq, id, kind, text, source, ${sqliteMs('at')}, unsafe, ${REQ} FROM events;
  DELETE FROM sqlite_sequence WHERE name = 'events_v15';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'events_v15', seq FROM sqlite_sequence WHERE name = 'events';
  DROP TABLE events;
  ALTER TABLE events_v15 RENAME TO events;
  CREATE INDEX events_req ON events (req_seq) WHERE req_seq IS NOT NULL;
  CREATE INDEX events_req_route ON events (req_route, req_seq) WHERE req_seq IS NOT NULL;

  CREATE TABLE held_v15 (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, text TEXT NOT NULL, source TEXT NOT NULL, at INTEGER NOT NULL,
    unsafe INTEGER NOT NULL CHECK (unsafe IN (0, 1))
  ) STRICT;
  INSERT INTO held_v15 (seq, id, kind, text, source, at, unsafe) SELECT seq, id, kind, text, source, ${sqliteMs('at')}, unsafe FROM held_events;
  DROP TABLE held_events;
  ALTER TABLE held_v15 RENAME TO held_events;
  CREATE INDEX held_events_source ON held_events (source, seq);
  ${SQLITE_HELD_TALLY}`;
