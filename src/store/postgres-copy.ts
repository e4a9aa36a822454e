import { COPY_TABLES, type CopyRow, type StoreCopy } from './copy.js';
import { pgStoreError } from './db-errors.js';
import { createPool, migratePg, redactUrl } from './postgres-schema.js';
import { StoreError } from './store.js';

/** A PostgreSQL store as one side of `hookrelay store copy`: migrated, a small pool. */
export async function openPgCopy(url: string): Promise<StoreCopy> {
  const pool = createPool({ url, max: 2, onIdleError: () => {} });
  const q = async <R extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> => {
    try {
      return (await pool.query<R>(text, values)).rows;
    } catch (err) {
      throw pgStoreError(err);
    }
  };
  try {
    const client = await pool.connect();
    try {
      await migratePg(client);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => {});
    const e = pgStoreError(err);
    throw new StoreError(e.code, `cannot open the store in ${redactUrl(url)}: ${e.message}`, { cause: err });
  }
  return {
    where: redactUrl(url),
    isEmpty: async () => {
      const [row] = await q<{ any: boolean }>(`SELECT ${COPY_TABLES.map(({ table }) => `EXISTS (SELECT 1 FROM ${table})`).join(' OR ')} AS any`);
      return !row!.any;
    },
    exportRows: (table, key, after, limit) =>
      after === undefined
        ? q<CopyRow>(`SELECT * FROM ${table} ORDER BY ${key} LIMIT $1`, [limit])
        : q<CopyRow>(`SELECT * FROM ${table} WHERE ${key} > $1 ORDER BY ${key} LIMIT $2`, [after, limit]),
    importRows: async (table, rows: CopyRow[]) => {
      if (rows.length) await q(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`, [JSON.stringify(rows)]);
    },
    lastEventSeq: async () => {
      const [row] = await q<{ n: number }>("SELECT COALESCE((SELECT last_value FROM pg_sequences WHERE sequencename = pg_get_serial_sequence('events', 'seq')::regclass::text AND last_value IS NOT NULL), 0) AS n");
      return Number(row!.n);
    },
    finishImport: async (lastEventSeq) => {
      // Identities go on after the copied rows (and events after the source's last seq ever).
      await q(`SELECT setval(pg_get_serial_sequence('events', 'seq'), GREATEST($1::bigint, (SELECT COALESCE(MAX(seq), 0) FROM events), 1), GREATEST($1::bigint, (SELECT COALESCE(MAX(seq), 0) FROM events)) > 0)`, [lastEventSeq]);
      for (const [table, key] of [['runs', 'seq'], ['history', 'seq'], ['outbox', 'id'], ['held_events', 'seq']] as const) {
        await q(`SELECT setval(pg_get_serial_sequence('${table}', '${key}'), GREATEST((SELECT COALESCE(MAX(${key}), 0) FROM ${table}), 1), (SELECT COUNT(*) FROM ${table}) > 0)`);
      }
    },
    close: () => pool.end(),
  };
}
