import type pg from 'pg';
import { eventBytes, toEvent, toHistory, toRun, type EventRow, type RunRow } from './rows.js';
import { createPool, pgStoreError, PG_SCHEMA_VERSION, redactUrl, schemaVersion } from './postgres-schema.js';
import { toRequest, type RequestRow } from './request-rows.js';
import {
  type ListRequestsOptions, type RequestRecord, RUN_STATUSES, type EventRecord, type HistoryMessage, type ListRunsOptions, type RunRecord,
  type RunStatus, type StoredKey,
} from './records.js';
import { StoreError, type StoreReader } from './store.js';
import * as sql from './sql/index.js';

/** A pool or a client: reads run on either. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.ClientBase;

/** LIMIT's value: null (no limit) for +∞, 0 for anything that is not a positive number. */
export function pgLimit(n: number): number | null {
  if (n === Number.POSITIVE_INFINITY) return null;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** Events fetched per round trip while a byte budget is being filled. */
const EVENTS_CHUNK = 100;

/**
 * The reads of the PostgreSQL store, over their statements (sql/*.ts). Each is one
 * statement on the pool (autocommit), so it sees every commit acknowledged before it started.
 * Errors come out as {@link StoreError}s.
 */
export function pgReads(db: Queryable) {
  const q = async <R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> => {
    try {
      return (await db.query<R>(text, values)).rows;
    } catch (err) {
      throw pgStoreError(err);
    }
  };
  return {
    /** See {@link Store.listEvents}: a budget is filled a chunk at a time, never more than a chunk past it. */
    async listEvents(after: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): Promise<EventRecord[]> {
      const max = pgLimit(limit) ?? Number.POSITIVE_INFINITY;
      const out: EventRecord[] = [];
      let bytes = 0;
      let from = Number(after) || 0;
      const budgeted = maxBytes !== Number.POSITIVE_INFINITY;
      while (out.length < max) {
        const want = budgeted ? Math.min(EVENTS_CHUNK, max - out.length) : pgLimit(limit);
        const rows = await q<EventRow>(sql.events.listEvents.pg, [from, want]);
        for (const row of rows) {
          const size = eventBytes(row);
          if (out.length > 0 && bytes + size > maxBytes) return out;
          out.push(toEvent(row));
          bytes += size;
        }
        if (!budgeted || rows.length < (want ?? Number.POSITIVE_INFINITY) || rows.length === 0) return out;
        from = rows[rows.length - 1]!.seq;
      }
      return out;
    },

    async getRun(runId: string): Promise<RunRecord | undefined> {
      const [row] = await q<RunRow>(sql.runs.getRun.pg, [runId]);
      return row && toRun(row);
    },

    async listRuns(opts: ListRunsOptions): Promise<RunRecord[]> {
      let below = Number.MAX_SAFE_INTEGER;
      if (opts.before !== undefined) {
        const [from] = await q<{ seq: number }>(sql.runs.runSeq.pg, [opts.before]);
        if (!from) return [];
        below = from.seq;
      }
      const rows = opts.status
        ? await q<RunRow>(sql.runs.listRunsWithStatus.pg, [opts.status, below, pgLimit(opts.limit)])
        : await q<RunRow>(sql.runs.listRuns.pg, [below, pgLimit(opts.limit)]);
      return rows.map(toRun);
    },

    /** Runs per status, every status present (0 for none): see {@link Store.countRuns}. */
    async countRuns(): Promise<Record<RunStatus, number>> {
      const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
      for (const { status, n } of await q<{ status: RunStatus; n: string }>(sql.runs.countRuns.pg, [])) counts[status] = Number(n);
      return counts;
    },

    async history(sessionKey: string, limit: number): Promise<HistoryMessage[]> {
      const rows = await q<{ role: string; content: string }>(
        sql.history.readHistory.pg,
        [sessionKey, pgLimit(limit)],
      );
      return rows.map(toHistory);
    },

    /** Stored answers of these key hashes accepted at or after `since` (ISO time), in order. */
    async findKeys(keys: readonly string[], since: string): Promise<(StoredKey | undefined)[]> {
      if (keys.length === 0) return [];
      const rows = await q<{ key: string; request_hash: string; status: number; body: string; at: string }>(
        sql.idempotency.findKeys.pg,
        [keys, since],
      );
      const byKey = new Map(rows.map((r) => [r.key, { requestHash: r.request_hash, status: r.status, body: r.body, at: r.at }]));
      return keys.map((k) => byKey.get(k));
    },

    async getState(key: string): Promise<string | undefined> {
      const [row] = await q<{ value: string }>(sql.history.getState.pg, [key]);
      return row?.value;
    },

    /** See {@link Store.listRequests}. */
    async listRequests(opts: ListRequestsOptions): Promise<RequestRecord[]> {
      const { text, values } = sql.requests.listRequests(opts, (i) => `$${i + 1}`);
      const rows = await q<RequestRow>(text, [...values, pgLimit(opts.limit)]);
      return rows.map(toRequest);
    },

    async getRequest(seq: number): Promise<RequestRecord | undefined> {
      if (!Number.isSafeInteger(seq)) return undefined;
      const [row] = await q<RequestRow>(sql.requests.getRequest.pg, [seq]);
      return row && toRequest(row);
    },
  };
}

/**
 * A {@link StoreReader} for `hookrelay events` and `runs`: a small pool, no migration, no
 * writes. Refuses, saying what to do, a database without the store or at another schema
 * version, and one that cannot be reached.
 */
export async function openPgReader(url: string): Promise<StoreReader> {
  const pool = createPool({ url, max: 2, onIdleError: () => {} });
  try {
    const version = await schemaVersion(pool);
    if (version === 0) throw new StoreError('unavailable', `no store yet in ${redactUrl(url)} (\`hookrelay serve\` creates it there)`);
    if (version < PG_SCHEMA_VERSION) {
      throw new StoreError('unavailable', `the store in ${redactUrl(url)} has schema v${version}, this hookrelay reads v${PG_SCHEMA_VERSION}: run \`hookrelay serve\` once to migrate it`);
    }
    if (version > PG_SCHEMA_VERSION) {
      throw new StoreError('unavailable', `the store in ${redactUrl(url)} has schema v${version}, newer than this hookrelay understands (v${PG_SCHEMA_VERSION}): upgrade hookrelay`);
    }
  } catch (err) {
    await pool.end().catch(() => {});
    if (err instanceof StoreError) throw err;
    throw new StoreError('unavailable', `cannot read the store in ${redactUrl(url)}: ${pgStoreError(err).message}`, { cause: err });
  }
  const reads = pgReads(pool);
  let open = true;
  const guard = <A extends unknown[], T>(fn: (...a: A) => Promise<T>) => (...a: A): Promise<T> =>
    open ? fn(...a) : Promise.reject(new StoreError('closed', 'the store is closed'));
  return {
    listEvents: guard(reads.listEvents),
    getRun: guard(reads.getRun),
    listRuns: guard(reads.listRuns),
    listRequests: guard(reads.listRequests),
    getRequest: guard(reads.getRequest),
    close: async () => {
      if (open) await pool.end();
      open = false;
    },
  };
}
