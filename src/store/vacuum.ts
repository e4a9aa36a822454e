import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../config/types.js';
import { DB_FILE, newFileIncremental } from './sqlite.js';
import { lockDataDir } from './sqlite-lock.js';
import { StoreError } from './store.js';

/**
 * `hookrelay store vacuum` (docs/reliability.md): rewrites a stopped SQLite store's file without
 * its free pages, and with `auto_vacuum = INCREMENTAL`, so that the pages later purges free are
 * given back as they go (a store made before that setting needs this once). PostgreSQL's
 * autovacuum does this on its own.
 */
export function vacuumStore(config: Config): { before: number; after: number } {
  if (config.store.kind === 'postgres') {
    throw new StoreError('failed', "a PostgreSQL store needs no vacuum from hookrelay: PostgreSQL's autovacuum reclaims purged rows (docs/postgresql.md)");
  }
  const file = join(config.dataDir, DB_FILE);
  if (!statSync(file, { throwIfNoEntry: false })) throw new StoreError('unavailable', `no store yet at ${config.dataDir} (\`hookrelay serve\` creates it there)`);
  const lock = lockDataDir(config.dataDir); // `locked` while a server has it
  try {
    const db = new Database(file, { fileMustExist: true });
    try {
      const size = () => statSync(file).size;
      db.pragma('wal_checkpoint(TRUNCATE)');
      const before = size();
      newFileIncremental(db);
      // VACUUM applies a changed auto_vacuum and writes the file anew (https://www.sqlite.org/lang_vacuum.html).
      db.exec('VACUUM');
      db.pragma('wal_checkpoint(TRUNCATE)');
      return { before, after: size() };
    } finally {
      db.close();
    }
  } finally {
    lock.release();
  }
}
