import { resolve } from 'node:path';
import type { Config } from '../config/types.js';
import { sqliteDb, type Db } from './dialect.js';
import { reads } from './reads.js';
import * as sql from './sql/index.js';
import { openSqliteReader } from './sqlite.js';

/**
 * What `hookrelay pause` and `resume` write (CONTRACT.md §14): one statement straight into the store beside a running
 * gateway (SQLite's busy_timeout waits for its writer between commits), which sees it within a second (dispatch/flow.ts).
 */
export async function openPauseControl(config: Config) {
  if (config.store.kind === 'postgres') {
    const reader = await (await import('./postgres.js')).openPgReader(config.store.url!, true);
    return control(reader.db, reader.close);
  }
  // The reader's checks (the file exists, its schema is this version's), then writes allowed on this connection only.
  const { db } = openSqliteReader(resolve(config.dataDir));
  db.pragma('query_only = OFF');
  return control(sqliteDb(db), async () => void db.close());
}

function control(db: Db, close: () => Promise<void>) {
  return {
    setPaused: async (id: string, paused: boolean) => void await db.run(paused ? sql.flow.pause : sql.flow.resume, paused ? [id, new Date().toISOString()] : [id]),
    paused: async () => (await reads(db).flowState()).paused,
    close,
  };
}
