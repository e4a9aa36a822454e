import type Database from 'better-sqlite3';

/**
 * The embedded store's schema and its migrations. The mapping between rows and records is
 * in `rows.ts` (re-exported here), shared with the PostgreSQL store, whose tables mirror these.
 *
 * Tables are STRICT (https://www.sqlite.org/stricttables.html) so that a wrong type is an
 * error instead of a silently coerced value, and every enum column has a CHECK.
 */

/**
 * Migration N (1-based) takes `PRAGMA user_version` from N-1 to N. Append only: a shipped
 * migration is never edited, because databases in the field already ran it.
 */
export const MIGRATIONS: readonly string[] = [
  // v1
  `
  -- AUTOINCREMENT: seq is the events cursor (GET /events?after=SEQ), so a seq must never be
  -- reused, even after old events are pruned (https://www.sqlite.org/autoinc.html).
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
  -- Claiming: the queued runs grouped by session (oldest first), and the "has a running run"
  -- probe (status = 'running' AND session_key = ?), are both prefixes of this index.
  CREATE INDEX runs_claim ON runs (status, session_key, seq);
  -- listRuns({status}) newest first without a sort.
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
  -- The claimable heads: one row per session that has queued runs and none running, holding
  -- its oldest queued run. A claim takes the oldest rows. Before, a claim walked the queued
  -- runs in order, and a burst queued in one busy session made every claim walk all of it
  -- (42 ms with 100 k queued) while every commit waited behind it. Triggers keep the table
  -- true on each path that inserts a run or changes its status — accept, claim, finish,
  -- requeue, recovery, another process writing the same file — so no caller can forget it.
  -- Keyed by the head's runs.seq, so that claims read it in order (oldest first) and a row
  -- costs two b-trees, not three.
  CREATE TABLE ready (
    seq         INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL UNIQUE
  ) STRICT;

  -- Claims no longer walk queued runs in order, and listRuns({status}) is an operator's
  -- query (a sort of the status's runs_claim range is fine there): one index less to write
  -- per accepted run and per status change.
  DROP INDEX runs_status;

  INSERT INTO ready (session_key, seq)
    SELECT session_key, MIN(seq) FROM runs AS q
    WHERE status = 'queued'
      AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.status = 'running' AND r.session_key = q.session_key)
    GROUP BY session_key;

  -- A new run is its session's head unless the session already has one or is running: one
  -- probe of runs_claim and one of ready's key per accepted run.
  CREATE TRIGGER runs_ready_insert AFTER INSERT ON runs WHEN NEW.status = 'queued'
  BEGIN
    INSERT OR IGNORE INTO ready (session_key, seq)
      SELECT NEW.session_key, NEW.seq
      WHERE NOT EXISTS (SELECT 1 FROM runs WHERE status = 'running' AND session_key = NEW.session_key);
  END;

  -- Any status change recomputes the session's row from runs_claim.
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
  -- A failed run's stable code beside its text (src/run-errors.ts).
  ALTER TABLE runs ADD COLUMN error_code TEXT;

  -- When a conversation turn was stored, for retention (store.retainDays). Turns stored before
  -- this version count from the upgrade.
  ALTER TABLE history ADD COLUMN at TEXT;
  UPDATE history SET at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');

  -- events.kind gains 'reply' (a heartbeat turn's answer). A CHECK cannot be altered, so the
  -- table is rebuilt (https://www.sqlite.org/lang_altertable.html#otheralter). Its AUTOINCREMENT
  -- counter is carried over as it was, not recomputed from the rows: seq is the /events cursor
  -- and must never go back, even when the newest events had been purged.
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
  -- RENAME also renames the table's sqlite_sequence row.
  ALTER TABLE events_v3 RENAME TO events;
  `,
  // v4
  `
  -- Idempotency keys (CONTRACT.md §8), each written in the same transaction as the events and
  -- runs it guards. key: SHA-256 (hex) of the route and the key (src/idempotency-key.ts);
  -- request_hash: what the key was first used for; status and body: the first answer.
  CREATE TABLE idempotency (
    key          TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    status       INTEGER NOT NULL,
    body         TEXT NOT NULL,
    at           TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  -- The purge walks the oldest keys first.
  CREATE INDEX idempotency_at ON idempotency (at);
  `,
  // v5
  `
  -- The delivery outbox (CONTRACT.md §9): one row per reply to send, inserted in the same
  -- transaction that ends its run or heartbeat turn, and worked off by src/dispatch/outbox.ts.
  -- kind says what settling it means ('run': the run's deliveredTo/error and its summary;
  -- 'heartbeat': the main session's last recipient); payload is the kind's JSON (for replies
  -- {provider, to, parts}), so that a new kind needs no new columns; 'forward' is admitted
  -- already (runtime.kind: forward), since a CHECK cannot be altered without a rebuild.
  -- parts_sent: the parts the provider acknowledged, each committed as it was accepted, so
  -- that a retry or a restart resumes at the first part not yet accepted.
  -- lease_until: a claim holds the row until then (an instance that dies gives it up).
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
  -- The due rows: claims and the "next due" probe read only the pending ones, in time order.
  CREATE INDEX outbox_due ON outbox (next_at) WHERE status = 'pending';
  `,
  // v6
  `
  -- Forward mode (runtime.kind: forward): the upstream's 2xx answer to a forwarded run,
  -- {status, upstreamRunId?} as JSON, set when its outbox row of kind 'forward' settles.
  ALTER TABLE runs ADD COLUMN forwarded TEXT;
  `,
  // v7
  `
  -- The request log (CONTRACT.md §11, src/store/request-rows.ts): one row per answered request
  -- under the hooks path. An accepted request's row is written in its accept's transaction,
  -- the others in batches. No index but the key on the request path: the console reads it
  -- newest first by seq. event_ids, run_ids: space-separated. body: only under
  -- hooks.keepBodies, until body_until. replay_of: the seq of the row a console replay repeated.
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
  -- Only rows that keep a body, or that are replays, are in these (none without keepBodies).
  CREATE INDEX requests_body_until ON requests (body_until) WHERE body_until IS NOT NULL;
  CREATE INDEX requests_replay_of ON requests (replay_of, seq) WHERE replay_of IS NOT NULL;
  `,
  // v8
  `
  -- Scoped hooks tokens (CONTRACT.md §4): the name of the hooks.tokens entry a request came
  -- with (never the token); NULL for an unnamed one, and for the rows written before.
  ALTER TABLE requests ADD COLUMN sender TEXT;
  `,
  // v9
  `
  -- Run callbacks (docs/callbacks.md): the URL a run's outcome is POSTed to when it ends, and
  -- outbox rows of kind 'callback' (committed with the run's end). A run may now have two
  -- rows, its reply and its callback: run_id is unique per kind. SQLite cannot alter a CHECK
  -- or drop a UNIQUE, so the outbox is rebuilt (same columns, same order, rows kept).
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

  -- An /agent body's sessionMode as given (issue 32): NULL (not given) and 'persistent'
  -- continue the session's conversation; 'isolated' runs from an empty history.
  ALTER TABLE runs ADD COLUMN session_mode TEXT;

  -- Flow control (CONTRACT.md §14, src/store/sql/flow.ts): the paused mappings, by id, written
  -- by hookrelay pause / resume and the console; and the wakes of paused mappings, held out of
  -- events until their mapping is resumed (they get their events seq then, in this order).
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
  // v10: a request's headers and query, kept with its body (hooks.keepBodies) and purged with
  // it: JSON {"headers":{…},"query":"…"}, credentials removed (src/credentials.ts), bounded.
  `
  ALTER TABLE requests ADD COLUMN head TEXT;
  `,
  // v11: events without the unique index on id (issue 34). Nothing reads an event by its id —
  // the /events cursor is seq — and the index was one more B-tree every accepted wake wrote
  // (about 3 µs of the writer's time per event, measured: docs/performance.md). The ids are
  // UUIDv7 drawn by this process. The AUTOINCREMENT counter is carried over as v3 did.
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
];

/** The schema version this code reads and writes (`PRAGMA user_version`). */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database to {@link SCHEMA_VERSION}. Runs under BEGIN IMMEDIATE so that two
 * processes opening the same file at once do not both migrate; `user_version` lives in the
 * database header and is transactional, so a failed migration leaves the old version.
 * Refuses a database written by a newer hookrelay rather than guessing at its schema.
 */
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

export * from './rows.js';
