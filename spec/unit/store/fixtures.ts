import { expect } from 'chai';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { NewEvent, NewRequestLog, NewRun } from '../../../src/store/records.js';
import { PG_MIGRATIONS } from '../../../src/store/postgres-schema.js';
import { MIGRATIONS } from '../../../src/store/sqlite-schema.js';

/** The store specs' clock: a fixed day far from today, and days counted from it. */
export const DAY = 24 * 60 * 60 * 1000;
export const T0 = Date.parse('2030-01-01T00:00:00.000Z');
export const iso = (ms: number) => new Date(ms).toISOString();

/** A wake event accepted at `at`. */
export const event = (id: string, at = T0, extra: Partial<NewEvent> = {}): NewEvent => ({
  id, kind: 'wake', text: `text ${id}`, source: 'wake', at: iso(at), unsafe: false, ...extra,
});

/** An agent run accepted at `at`, without delivery, in its own session unless one is given. */
/** A request-log row of a `/wake` at T0, with `extra`. */
export const logRow = (extra: Partial<NewRequestLog> = {}): NewRequestLog => ({
  at: iso(T0), requestId: 'req-1', method: 'POST', path: '/hooks/wake', route: 'wake', status: 200, ms: 1.5,
  eventIds: [], runIds: [], replayed: false, ...extra,
});

export const queuedRun = (runId: string, at = T0, sessionKey = `hook:${runId}`): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: iso(at),
});

/** Awaits `p` and expects it to reject with a StoreError of `code`. */
export async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  let err: { code?: string; name?: string } | undefined;
  await p.then(
    () => undefined,
    (e) => (err = e),
  );
  expect(err, `expected a StoreError ${code}`).to.not.equal(undefined);
  expect(err!.name).to.equal('StoreError');
  expect(err!.code).to.equal(code);
}

/**
 * A SQLite database at `file` as an older hookrelay left it: the migrations up to schema
 * `version` run in one transaction (as migrate() runs them), in WAL mode. The specs of a later
 * migration fill it, close it and open it with the store.
 */
export function sqliteAtVersion(file: string, version: number): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.transaction(() => {
    for (let v = 0; v < version; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${version}`);
  })();
  return db;
}

/** The PostgreSQL database at `url` as an older hookrelay left it: its migrations up to `version`, as migratePg runs them; a client on it. */
export async function postgresAtVersion(url: string, version: number): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('CREATE TABLE hookrelay_schema (version integer NOT NULL)');
  for (let v = 0; v < version; v++) await c.query(PG_MIGRATIONS[v]!);
  await c.query('INSERT INTO hookrelay_schema (version) VALUES ($1)', [version]);
  return c;
}
