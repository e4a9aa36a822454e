import type Database from 'better-sqlite3';
import { SQLITE_AT_MS } from './sql/events.js';
import { SQLITE_TALLIES } from './sql/tallies.js';

/** The embedded store's schema: STRICT tables (https://www.sqlite.org/stricttables.html), a CHECK on every enum column. */

/** The claimable heads of the runs as they stand: part of migration v2 (so never to change), and what `store copy` refills `ready` with. */
export const FILL_READY = `INSERT INTO ready (session_key, seq)
    SELECT session_key, MIN(seq) FROM runs AS q
    WHERE status = 'queued'
      AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.status = 'running' AND r.session_key = q.session_key)
    GROUP BY session_key;`;

/** Migration N takes `PRAGMA user_version` from N-1 to N; append only (databases in the field ran them). */
export const MIGRATIONS: readonly string[] = [
  // v1
  `
  -- AUTOINCREMENT: seq is the /events cursor, never reused (https://www.sqlite.org/autoinc.html).
  CREATE TABLE events (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    id     TEXT NOT NULL UNIQUE,
    kind   TEXT NOT NULL CHECK (kind IN ('wake', 'summary')),
    text   TEXT NOT NULL,
    source TEXT NOT NULL,
    at     TEXT NOT NULL,
    unsafe INTEGER NOT NULL CHECK (unsafe IN (0, 1))
  ) STRICT;

  CREATE TABLE runs (
    seq             INTEGER PRIMARY KEY,  -- acceptance order: claims take the oldest first
    run_id          TEXT NOT NULL UNIQUE,
    session_key     TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'timed_out')),
    message         TEXT NOT NULL,
    name            TEXT,
    model           TEXT,
    thinking        TEXT,
    timeout_seconds REAL,
    wake_mode       TEXT NOT NULL,
    deliver         INTEGER NOT NULL CHECK (deliver IN (0, 1)),
    provider        TEXT NOT NULL,
    recipient       TEXT,                 -- NewRun.to ("to" is an SQL keyword)
    source          TEXT NOT NULL,
    unsafe          INTEGER NOT NULL CHECK (unsafe IN (0, 1)),
    created_at      TEXT NOT NULL,
    started_at      TEXT,
    ended_at        TEXT,
    reply           TEXT,
    error           TEXT,
    delivered_to    TEXT
  ) STRICT;
  CREATE INDEX runs_claim ON runs (status, session_key, seq);
  CREATE INDEX runs_status ON runs (status, seq);

  CREATE TABLE history (
    seq         INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL
  ) STRICT;
  CREATE INDEX history_session ON history (session_key, seq);

  CREATE TABLE state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // v2
  `
  -- The claimable heads (one per session with queued runs and none running), kept by triggers on every path.
  CREATE TABLE ready (
    seq         INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL UNIQUE
  ) STRICT;

  DROP INDEX runs_status;

  ${FILL_READY}

  CREATE TRIGGER runs_ready_insert AFTER INSERT ON runs WHEN NEW.status = 'queued'
  BEGIN
    INSERT OR IGNORE INTO ready (session_key, seq)
      SELECT NEW.session_key, NEW.seq
      WHERE NOT EXISTS (SELECT 1 FROM runs WHERE status = 'running' AND session_key = NEW.session_key);
  END;

  CREATE TRIGGER runs_ready_update AFTER UPDATE OF status ON runs
  BEGIN
    DELETE FROM ready WHERE session_key = NEW.session_key;
    INSERT INTO ready (session_key, seq)
      SELECT session_key, seq FROM runs
      WHERE status = 'queued' AND session_key = NEW.session_key
        AND NOT EXISTS (SELECT 1 FROM runs WHERE status = 'running' AND session_key = NEW.session_key)
      ORDER BY seq LIMIT 1;
  END;
  `,
  // v3
  `
  ALTER TABLE runs ADD COLUMN error_code TEXT;

  ALTER TABLE history ADD COLUMN at TEXT;
  UPDATE history SET at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');

  -- A CHECK cannot be altered: rebuilt, its AUTOINCREMENT counter carried over (seq never goes back).
  CREATE TABLE events_v3 (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    id     TEXT NOT NULL UNIQUE,
    kind   TEXT NOT NULL CHECK (kind IN ('wake', 'summary', 'reply')),
    text   TEXT NOT NULL,
    source TEXT NOT NULL,
    at     TEXT NOT NULL,
    unsafe INTEGER NOT NULL CHECK (unsafe IN (0, 1))
  ) STRICT;
  INSERT INTO events_v3 (seq, id, kind, text, source, at, unsafe) SELECT seq, id, kind, text, source, at, unsafe FROM events;
  DELETE FROM sqlite_sequence WHERE name = 'events_v3';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'events_v3', seq FROM sqlite_sequence WHERE name = 'events';
  DROP TABLE events;
  ALTER TABLE events_v3 RENAME TO events;
  `,
  // v4
  `
  CREATE TABLE idempotency (
    key          TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    status       INTEGER NOT NULL,
    body         TEXT NOT NULL,
    at           TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX idempotency_at ON idempotency (at);
  `,
  // v5
  `
  -- The delivery outbox (CONTRACT.md §9): payload is the kind's JSON; parts_sent lets a retry resume.
  CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('run', 'heartbeat', 'forward')),
    run_id      TEXT UNIQUE,
    target      TEXT NOT NULL,
    payload     TEXT NOT NULL,
    parts       INTEGER NOT NULL CHECK (parts >= 1),
    parts_sent  INTEGER NOT NULL DEFAULT 0,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_at     TEXT NOT NULL,
    lease_until TEXT,
    error       TEXT,
    created_at  TEXT NOT NULL,
    settled_at  TEXT
  ) STRICT;
  CREATE INDEX outbox_due ON outbox (next_at) WHERE status = 'pending';
  `,
  // v6
  `
  ALTER TABLE runs ADD COLUMN forwarded TEXT;
  `,
  // v7
  `
  CREATE TABLE requests (
    seq          INTEGER PRIMARY KEY,
    at           TEXT NOT NULL,
    request_id   TEXT,
    method       TEXT NOT NULL,
    path         TEXT NOT NULL,
    route        TEXT NOT NULL,
    status       INTEGER NOT NULL,
    ms           REAL NOT NULL,
    event_ids    TEXT,
    run_ids      TEXT,
    replayed     INTEGER NOT NULL CHECK (replayed IN (0, 1)),
    error        TEXT,
    content_type TEXT,
    user_agent   TEXT,
    body         TEXT,
    body_until   TEXT,
    replay_of    INTEGER
  ) STRICT;
  CREATE INDEX requests_body_until ON requests (body_until) WHERE body_until IS NOT NULL;
  CREATE INDEX requests_replay_of ON requests (replay_of, seq) WHERE replay_of IS NOT NULL;
  `,
  // v8
  `
  ALTER TABLE requests ADD COLUMN sender TEXT;
  `,
  // v9
  `
  ALTER TABLE runs ADD COLUMN callback_url TEXT;
  CREATE TABLE outbox_v9 (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('run', 'heartbeat', 'forward', 'callback')),
    run_id      TEXT,
    target      TEXT NOT NULL,
    payload     TEXT NOT NULL,
    parts       INTEGER NOT NULL CHECK (parts >= 1),
    parts_sent  INTEGER NOT NULL DEFAULT 0,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_at     TEXT NOT NULL,
    lease_until TEXT,
    error       TEXT,
    created_at  TEXT NOT NULL,
    settled_at  TEXT
  ) STRICT;
  INSERT INTO outbox_v9 SELECT * FROM outbox;
  DROP TABLE outbox;
  ALTER TABLE outbox_v9 RENAME TO outbox;
  CREATE INDEX outbox_due ON outbox (next_at) WHERE status = 'pending';
  CREATE UNIQUE INDEX outbox_run_kind ON outbox (run_id, kind) WHERE run_id IS NOT NULL;

  ALTER TABLE runs ADD COLUMN session_mode TEXT;

  CREATE TABLE paused (
    mapping TEXT PRIMARY KEY,
    at      TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE held_events (
    seq    INTEGER PRIMARY KEY,
    id     TEXT NOT NULL UNIQUE,
    kind   TEXT NOT NULL,
    text   TEXT NOT NULL,
    source TEXT NOT NULL,
    at     TEXT NOT NULL,
    unsafe INTEGER NOT NULL CHECK (unsafe IN (0, 1))
  ) STRICT;
  CREATE INDEX held_events_source ON held_events (source, seq);
  `,
  // v10: a kept body's headers and query (JSON), purged with it.
  `
  ALTER TABLE requests ADD COLUMN head TEXT;
  `,
  // v11: events without the unique index on id: nothing reads an event by it (the cursor is seq).
  `
  CREATE TABLE events_v11 (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    id     TEXT NOT NULL,
    kind   TEXT NOT NULL CHECK (kind IN ('wake', 'summary', 'reply')),
    text   TEXT NOT NULL,
    source TEXT NOT NULL,
    at     TEXT NOT NULL,
    unsafe INTEGER NOT NULL CHECK (unsafe IN (0, 1))
  ) STRICT;
  INSERT INTO events_v11 (seq, id, kind, text, source, at, unsafe) SELECT seq, id, kind, text, source, at, unsafe FROM events;
  DELETE FROM sqlite_sequence WHERE name = 'events_v11';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'events_v11', seq FROM sqlite_sequence WHERE name = 'events';
  DROP TABLE events;
  ALTER TABLE events_v11 RENAME TO events;
  `,
  // v12: an index for each filter the reads offer (sql/runs.ts, sql/requests.ts), newest first; the kept counts (sql/tallies.ts).
  `
  CREATE INDEX runs_status ON runs (status, seq);
  CREATE INDEX requests_route ON requests (route, seq);
  CREATE INDEX requests_class ON requests (status / 100, seq);
  CREATE INDEX requests_route_class ON requests (route, status / 100, seq);
  ${SQLITE_TALLIES}
  `,
  // v13 (PostgreSQL v12): why nothing matched a request (src/match-explanation.ts), and its failed templates, `match.when` expressions and transforms (src/failure.ts); JSON, CONTRACT.md §16.
  `
  ALTER TABLE requests ADD COLUMN explain TEXT;
  ALTER TABLE requests ADD COLUMN failures TEXT;
  `,
  // v14 (PostgreSQL v13): an accepted request's row folded into its one event or run (rows.ts FOLD_COLUMNS); req_seq is drawn with requests.seq.
  `
  ${['events', 'runs'].map((t) => `
  ALTER TABLE ${t} ADD COLUMN req_seq INTEGER;
  ALTER TABLE ${t} ADD COLUMN req_lag INTEGER;
  ALTER TABLE ${t} ADD COLUMN req_route TEXT;
  ALTER TABLE ${t} ADD COLUMN req_status INTEGER;
  ALTER TABLE ${t} ADD COLUMN req_ms INTEGER;
  ALTER TABLE ${t} ADD COLUMN req_method TEXT;
  ALTER TABLE ${t} ADD COLUMN req_path TEXT;
  ALTER TABLE ${t} ADD COLUMN req_id TEXT;
  ALTER TABLE ${t} ADD COLUMN req_type TEXT;
  ALTER TABLE ${t} ADD COLUMN req_ua TEXT;
  ALTER TABLE ${t} ADD COLUMN req_sender TEXT;
  CREATE INDEX ${t}_req ON ${t} (req_seq) WHERE req_seq IS NOT NULL;
  CREATE INDEX ${t}_req_route ON ${t} (req_route, req_seq) WHERE req_seq IS NOT NULL;`).join('')}
  `,
  // v15 (PostgreSQL v14): an event's and a held wake's time as integer ms.
  SQLITE_AT_MS,
];

/** The schema version this code reads and writes (`PRAGMA user_version`). */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database to {@link SCHEMA_VERSION} under BEGIN IMMEDIATE (one process migrates); refuses a newer one. */
export function migrate(db: Database.Database): { from: number; to: number } {
  return db.transaction(() => {
    const from = db.pragma('user_version', { simple: true }) as number;
    if (from > SCHEMA_VERSION) {
      throw new Error(`the database schema is v${from}, newer than this hookrelay understands (v${SCHEMA_VERSION}); upgrade hookrelay`);
    }
    for (let v = from; v < SCHEMA_VERSION; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
    return { from, to: SCHEMA_VERSION };
  }).immediate();
}
