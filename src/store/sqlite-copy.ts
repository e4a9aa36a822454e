import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { COPY_TABLES, type CopyRow, type CopyTable, type StoreCopy } from './copy.js';
import { lockDataDir } from './sqlite-lock.js';
import { DB_FILE } from './sqlite.js';
import { FILL_READY, migrate } from './sqlite-schema.js';

/** The embedded store as one side of `hookrelay store copy`: its data directory locked, migrated, one connection. */
export async function openSqliteCopy(dataDir: string): Promise<StoreCopy> {
  mkdirSync(dataDir, { recursive: true });
  const lock = lockDataDir(dataDir);
  let db: Database.Database;
  try {
    db = new Database(join(dataDir, DB_FILE));
    db.pragma('journal_mode = WAL');
    migrate(db);
  } catch (err) {
    lock.release();
    throw err;
  }
  const importMany = db.transaction((table: CopyTable, rows: CopyRow[]) => {
    const columns = Object.keys(rows[0]!);
    const insert = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
    for (const row of rows) insert.run(row);
  });
  return {
    where: join(dataDir, DB_FILE),
    isEmpty: async () => COPY_TABLES.every(({ table }) => !db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get()),
    exportRows: async (table, key, after, limit) =>
      (after === undefined
        ? db.prepare(`SELECT * FROM ${table} ORDER BY ${key} LIMIT ?`).all(limit)
        : db.prepare(`SELECT * FROM ${table} WHERE ${key} > ? ORDER BY ${key} LIMIT ?`).all(after, limit)) as CopyRow[],
    importRows: async (table, rows) => {
      if (rows.length) importMany(table, rows);
    },
    lastEventSeq: async () => (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").get() as { seq: number } | undefined)?.seq ?? 0,
    finishImport: async (lastEventSeq) => {
      db.transaction(() => {
        // seq goes on after the source's last one, even where its newest events had been purged.
        db.prepare("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'events'").run(lastEventSeq);
        db.prepare("INSERT INTO sqlite_sequence (name, seq) SELECT 'events', ? WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events')").run(lastEventSeq);
        // The claimable heads, as migration v2 builds them: rows came in any status order.
        db.exec(`DELETE FROM ready; ${FILL_READY}`);
      })();
    },
    close: async () => {
      db.close();
      lock.release();
    },
  };
}
