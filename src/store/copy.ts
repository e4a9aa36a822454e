import type { Config } from '../config/types.js';
import { openPgCopy } from './postgres-copy.js';
import { openSqliteCopy } from './sqlite-copy.js';
import { StoreError } from './store.js';

/** `hookrelay store copy` (CONTRACT.md §10): everything one store holds, events with their seq, into another. */

/** A table to copy and the column it is read in order of (its primary key). */
export const COPY_TABLES = [
  { table: 'events', key: 'seq' },
  { table: 'runs', key: 'seq' },
  { table: 'history', key: 'seq' },
  { table: 'outbox', key: 'id' },
  { table: 'idempotency', key: 'key' },
  { table: 'state', key: 'key' },
  { table: 'paused', key: 'mapping' },
  { table: 'held_events', key: 'seq' },
] as const;

export type CopyTable = (typeof COPY_TABLES)[number]['table'];
export type CopyRow = Record<string, string | number | null>;

/** One side of a copy: the store opened for bulk reading or writing, nothing else running on it. */
export interface StoreCopy {
  /** Where it is, for messages (a URL without its password). */
  readonly where: string;
  /** True when the store holds no row in any copied table. */
  isEmpty(): Promise<boolean>;
  /** Up to `limit` rows of `table` whose key is above `after` (all when undefined), in key order. */
  exportRows(table: CopyTable, key: string, after: string | number | undefined, limit: number): Promise<CopyRow[]>;
  /** Inserts rows as they are (keys and seq included), in one transaction. */
  importRows(table: CopyTable, rows: CopyRow[]): Promise<void>;
  /** The last event seq ever handed out (not only the largest left): seq is never reused. */
  lastEventSeq(): Promise<number>;
  /** After the import: counters continue after what was copied, derived data is rebuilt. */
  finishImport(lastEventSeq: number): Promise<void>;
  close(): Promise<void>;
}

/** Opens the store of `config` for copying. A SQLite store in use by a running server is refused (its lock). */
function openCopy(config: Config): Promise<StoreCopy> {
  return config.store.kind === 'postgres' ? openPgCopy(config.store.url!) : openSqliteCopy(config.dataDir);
}

export type CopyCounts = Record<CopyTable, number>;

/** Copies everything from `from` into `to`, `batch` rows at a time, telling `progress` after each batch. */
export async function copyStore(from: Config, to: Config, progress: (line: string) => void, batch = 1000): Promise<CopyCounts> {
  const source = await openCopy(from);
  let target: StoreCopy | undefined;
  try {
    target = await openCopy(to);
    if (!(await target.isEmpty())) {
      throw new StoreError('constraint', `the target store (${target.where}) is not empty: copy into a new database or data directory, or empty this one first`);
    }
    const counts = {} as CopyCounts;
    for (const { table, key } of COPY_TABLES) {
      counts[table] = 0;
      let after: string | number | undefined;
      for (;;) {
        const rows = await source.exportRows(table, key, after, batch);
        if (rows.length === 0) break;
        await target.importRows(table, rows);
        counts[table] += rows.length;
        after = rows[rows.length - 1]![key] as string | number;
        progress(`${table}: ${counts[table]} copied`);
        if (rows.length < batch) break;
      }
    }
    await target.finishImport(await source.lastEventSeq());
    return counts;
  } finally {
    await target?.close();
    await source.close();
  }
}
