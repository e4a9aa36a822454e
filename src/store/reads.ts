import type { Db } from './dialect.js';
import { StoreError, type StoreReader } from './store.js';
import {
  RUN_STATUSES, type EventRecord, type FlowState, type HistoryMessage, type ListRequestsOptions, type ListRunsOptions, type RequestRecord,
  type RunRecord, type RunStatus, type StoredKey,
} from './records.js';
import { eventBytes, toEvent, toRequest, toRun, type EventRow, type RequestRow, type RunRow } from './rows.js';
import * as sql from './sql/index.js';

/** Events read per statement while a byte budget is being filled. */
const EVENTS_CHUNK = 100;

/** The store's reads, once for both dialects: each one statement, seeing every commit acknowledged before it. */
export function reads(db: Db) {
  return {
    /** See Store.listEvents: a budget is filled a chunk at a time. */
    async listEvents(after: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): Promise<EventRecord[]> {
      const max = db.limit(limit) ?? Number.POSITIVE_INFINITY;
      const budgeted = maxBytes !== Number.POSITIVE_INFINITY;
      const out: EventRecord[] = [];
      let bytes = 0;
      let from = Number(after) || 0;
      while (out.length < max || max < 0) {
        const want = budgeted ? (max < 0 ? EVENTS_CHUNK : Math.min(EVENTS_CHUNK, max - out.length)) : db.limit(limit);
        const rows = await db.all<EventRow>(sql.events.listEvents, [from, want]);
        for (const row of rows) {
          const event = toEvent(row);
          const size = eventBytes(event);
          if (out.length > 0 && bytes + size > maxBytes) return out;
          out.push(event);
          bytes += size;
        }
        if (!budgeted || rows.length === 0 || rows.length < want!) return out;
        from = rows[rows.length - 1]!.seq;
      }
      return out;
    },

    async getRun(runId: string): Promise<RunRecord | undefined> {
      const row = await db.get<RunRow>(sql.runs.getRun, [runId]);
      return row && toRun(row);
    },

    async listRuns(opts: ListRunsOptions): Promise<RunRecord[]> {
      let below = Number.MAX_SAFE_INTEGER;
      if (opts.before !== undefined) {
        const from = await db.get<{ seq: number }>(sql.runs.runSeq, [opts.before]);
        if (!from) return [];
        below = from.seq;
      }
      const params = [below, db.limit(opts.limit)];
      const rows = opts.status ? await db.all<RunRow>(sql.runs.listRunsWithStatus, [...params, opts.status]) : await db.all<RunRow>(sql.runs.listRuns, params);
      return rows.map(toRun);
    },

    async countRuns(): Promise<Record<RunStatus, number>> {
      const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
      for (const { status, n } of await db.all<{ status: RunStatus; n: number }>(sql.tallies.countRuns)) counts[status] = Number(n);
      return counts;
    },

    async history(sessionKey: string, limit: number): Promise<HistoryMessage[]> {
      return db.all<HistoryMessage>(sql.history.readHistory, [sessionKey, db.limit(limit)]);
    },

    /** Stored answers of these key hashes accepted at or after `since` (ISO time), in order. */
    findKeys(keys: readonly string[], since: string): Promise<(StoredKey | undefined)[]> {
      return Promise.all(keys.map((k) => db.get<StoredKey>(sql.idempotency.findKey, [k, since])));
    },

    async getState(key: string): Promise<string | undefined> {
      return (await db.get<{ value: string }>(sql.history.getState, [key]))?.value;
    },

    async listRequests(opts: ListRequestsOptions): Promise<RequestRecord[]> {
      const { text, values } = sql.requests.listRequests(opts);
      return (await db.all<RequestRow>(text, [...values, db.limit(opts.limit)])).map(toRequest);
    },

    async getRequest(seq: number): Promise<RequestRecord | undefined> {
      if (!Number.isSafeInteger(seq)) return undefined;
      const row = await db.get<RequestRow>(sql.requests.getRequest, [seq]);
      return row && toRequest(row);
    },

    async flowState(): Promise<FlowState> {
      const state: FlowState = { paused: [], held: [] };
      for (const r of await db.all<{ name: string; what: string }>(sql.flow.flowState)) (r.what === 'paused' ? state.paused : state.held).push(r.name);
      state.paused.sort();
      state.held.sort();
      return state;
    },

    /** Held wakes and queued runs of paused mappings, summed per source. */
    async countHeld(): Promise<Record<string, number>> {
      const counts: Record<string, number> = {};
      for (const r of await db.all<{ source: string; n: number | string }>(sql.tallies.countHeld)) counts[r.source] = (counts[r.source] ?? 0) + Number(r.n);
      return counts;
    },
  };
}

export type Reads = ReturnType<typeof reads>;

/** The reads a store serves as they are (findKeys takes the store's key window). */
const SERVED = ['listEvents', 'getRun', 'listRuns', 'countRuns', 'history', 'getState', 'listRequests', 'getRequest', 'flowState', 'countHeld'] as const;
export type ServedReads = Pick<Reads, (typeof SERVED)[number]>;

/** Each served read of `r`, run through `call` (a store's guard and error mapping). */
export function served(r: Reads, call: <T>(read: () => Promise<T>) => Promise<T>): ServedReads {
  const entries = SERVED.map((name) => [name, (...a: unknown[]) => call(() => (r[name] as (...a: unknown[]) => Promise<unknown>)(...a))]);
  return Object.fromEntries(entries) as ServedReads;
}

/** A {@link StoreReader} over reads.ts, rejecting `closed` once closed. */
export function readerOf<X extends object>(db: Db, end: () => Promise<void>, extra: X): StoreReader & X {
  let open = true;
  const call = <T>(read: () => Promise<T>): Promise<T> =>
    open ? read().catch((err: unknown) => Promise.reject(db.storeError(err))) : Promise.reject(new StoreError('closed', 'the store is closed'));
  return {
    ...extra,
    ...served(reads(db), call),
    close: async () => {
      if (open) await end();
      open = false;
    },
  };
}
