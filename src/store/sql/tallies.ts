/** The held wakes' triggers: part of SQLite v12 and of v15, which rebuilds `held_events` (sql/events.ts), so never to change. */
export const SQLITE_HELD_TALLY = `CREATE TRIGGER held_tally_insert AFTER INSERT ON held_events BEGIN
    INSERT INTO tallies (what, source, n) VALUES ('held', NEW.source, 1) ON CONFLICT (what, source) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER held_tally_delete AFTER DELETE ON held_events BEGIN
    UPDATE tallies SET n = n - 1 WHERE what = 'held' AND source = OLD.source;
  END;
`;

/**
 * How many runs are in each status and how many wakes are held (`what` 'held'), per source:
 * the `/metrics` gauges (CONTRACT.md §11) read as kept counts, not counted per scrape. Triggers
 * keep them in the transaction of every change to `runs` and `held_events`, whichever path made
 * it; the migrations that create them (SQLite v12, PostgreSQL v11) seed them once. Part of those
 * migrations, so never to change.
 */
export const SQLITE_TALLIES = `
  CREATE TABLE tallies (
    what   TEXT NOT NULL,
    source TEXT NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (what, source)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO tallies (what, source, n) SELECT status, source, count(*) FROM runs GROUP BY status, source;
  INSERT INTO tallies (what, source, n) SELECT 'held', source, count(*) FROM held_events GROUP BY source;

  CREATE TRIGGER runs_tally_insert AFTER INSERT ON runs BEGIN
    INSERT INTO tallies (what, source, n) VALUES (NEW.status, NEW.source, 1) ON CONFLICT (what, source) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER runs_tally_update AFTER UPDATE OF status ON runs WHEN OLD.status <> NEW.status BEGIN
    UPDATE tallies SET n = n - 1 WHERE what = OLD.status AND source = OLD.source;
    INSERT INTO tallies (what, source, n) VALUES (NEW.status, NEW.source, 1) ON CONFLICT (what, source) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER runs_tally_delete AFTER DELETE ON runs BEGIN
    UPDATE tallies SET n = n - 1 WHERE what = OLD.status AND source = OLD.source;
  END;
  ${SQLITE_HELD_TALLY}`;

/** Adds the rows of `changes` (what, source, ±1) to this connection's own slot: see {@link PG_TALLIES}. */
const pgAdd = (changes: string) => `INSERT INTO tallies AS t (what, source, slot, n)
      SELECT what, source, pg_backend_pid(), sum(d) FROM (${changes}) AS c (what, source, d) GROUP BY what, source HAVING sum(d) <> 0
      ON CONFLICT (what, source, slot) DO UPDATE SET n = t.n + excluded.n;`;

const pgTrigger = (table: string, what: string) => `
  CREATE FUNCTION hookrelay_tally_${table}() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${pgAdd(`SELECT ${what}, source, 1 FROM new_rows`)}
    ELSIF TG_OP = 'DELETE' THEN
      ${pgAdd(`SELECT ${what}, source, -1 FROM old_rows`)}
    ELSE
      ${pgAdd(`SELECT ${what}, source, 1 FROM new_rows UNION ALL SELECT ${what}, source, -1 FROM old_rows`)}
    END IF;
    RETURN NULL;
  END
  $fn$;
  CREATE TRIGGER ${table}_tally_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hookrelay_tally_${table}();
  CREATE TRIGGER ${table}_tally_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION hookrelay_tally_${table}();`;

/**
 * PostgreSQL: one statement-level trigger per change, adding to a row of the changing
 * connection's own (`slot`, its backend pid), so that instances committing at once never wait
 * on one counter row; a read sums the slots, and {@link compactTallies} folds them into slot 0.
 */
export const PG_TALLIES = `
  CREATE TABLE tallies (
    what   text NOT NULL,
    source text NOT NULL,
    slot   integer NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (what, source, slot)
  );
  INSERT INTO tallies SELECT status, source, 0, count(*) FROM runs GROUP BY status, source;
  INSERT INTO tallies SELECT 'held', source, 0, count(*) FROM held_events GROUP BY source;
  ${pgTrigger('runs', 'status')}
  CREATE TRIGGER runs_tally_update AFTER UPDATE ON runs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hookrelay_tally_runs();
  ${pgTrigger('held_events', "'held'")}
`;

export const countRuns = "SELECT what AS status, sum(n) AS n FROM tallies WHERE what <> 'held' GROUP BY what";

/** Held wakes, and queued runs of paused mappings, per source. */
export const countHeld = `SELECT source, sum(n) AS n FROM tallies
  WHERE what = 'held' OR (what = 'queued' AND source IN (SELECT 'mapping:' || mapping FROM paused))
  GROUP BY source HAVING sum(n) > 0`;

/**
 * Retention's upkeep of the tallies: PostgreSQL folds the connections' slots into slot 0
 * (a connection adding meanwhile waits for its row, then adds anew); SQLite drops the zeros.
 */
export const compactTallies = {
  sqlite: 'DELETE FROM tallies WHERE n = 0',
  pg: `WITH gone AS (DELETE FROM tallies WHERE slot <> 0 OR n = 0 RETURNING what, source, n)
    INSERT INTO tallies AS t (what, source, slot, n) SELECT what, source, 0, sum(n) FROM gone GROUP BY what, source HAVING sum(n) <> 0
    ON CONFLICT (what, source, slot) DO UPDATE SET n = t.n + excluded.n`,
};
