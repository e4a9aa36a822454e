import { resolve } from 'node:path';
import type { Config } from '../config/types.js';
import { pgStoreError } from './db-errors.js';
import { pgDb, sqliteDb, type Db } from './dialect.js';
import { createPool, PG_SCHEMA_VERSION, redactUrl, schemaVersion } from './postgres-schema.js';
import { reads } from './reads.js';
import * as sql from './sql/index.js';
import { openSqliteReader } from './sqlite.js';
import { StoreError } from './store.js';

/**
 * What `hookrelay pause` and `resume` write (CONTRACT.md §14): the paused mappings, straight
 * into the store beside a running gateway, like `events` and `runs` read it — no token, no
 * lock. SQLite: one short write transaction on the WAL database (busy_timeout waits for the
 * gateway's writer between its commits); PostgreSQL: one statement. The gateways see it
 * within a second (dispatch/flow.ts) and release what it held themselves.
 */
export interface PauseControl {
  setPaused(id: string, paused: boolean): Promise<void>;
  paused(): Promise<string[]>;
  close(): Promise<void>;
}

/** Opens the store of `config` for pausing; {@link StoreError} `unavailable` (saying what to do) when there is none yet or its schema is another version's. */
export async function openPauseControl(config: Config): Promise<PauseControl> {
  if (config.store.kind === 'postgres') return openPg(config.store.url!);
  // The reader's checks (the file exists, its schema is this version's), then writes allowed on this connection only.
  const { db } = openSqliteReader(resolve(config.dataDir));
  db.pragma('query_only = OFF');
  return control(sqliteDb(db), async () => void db.close());
}

function control(db: Db, close: () => Promise<void>): PauseControl {
  return {
    setPaused: async (id, paused) => void await db.run(paused ? sql.flow.pause : sql.flow.resume, paused ? [id, new Date().toISOString()] : [id]),
    paused: async () => (await reads(db).flowState()).paused,
    close,
  };
}

async function openPg(url: string): Promise<PauseControl> {
  const pool = createPool({ url, max: 1, onIdleError: () => {} });
  try {
    const version = await schemaVersion(pool);
    if (version === 0) throw new StoreError('unavailable', `no store yet in ${redactUrl(url)} (\`hookrelay serve\` creates it there)`);
    if (version !== PG_SCHEMA_VERSION) {
      throw new StoreError('unavailable', `the store in ${redactUrl(url)} has schema v${version}, this hookrelay writes v${PG_SCHEMA_VERSION}: ${version < PG_SCHEMA_VERSION ? 'run `hookrelay serve` once to migrate it' : 'upgrade hookrelay'}`);
    }
  } catch (err) {
    await pool.end().catch(() => {});
    if (err instanceof StoreError) throw err;
    throw new StoreError('unavailable', `cannot reach the store in ${redactUrl(url)}: ${pgStoreError(err).message}`, { cause: err });
  }
  return control(pgDb(pool), () => pool.end());
}
