import type {
  ClaimRules, DeliveryOutcomeRecord, DeliveryRecord, FlowState, EventRecord, HistoryMessage, ListRequestsOptions, ListRunsOptions, NewDelivery, NewEvent, NewForward,
  NewKey, NewRequestLog, NewRun, RequestRecord, RunEffects, RunEnd, RunRecord, RunStatus, SettleEffects, StoredKey,
} from './records.js';

/**
 * The store seam. Everything the gateway answered 2xx for is behind this interface, and
 * nothing else in the code talks to a database: the embedded SQLite store (sqlite.ts) and
 * PostgreSQL (postgres.ts, for several instances) implement it, and one spec suite
 * (spec/unit/store/contract/) holds both to it. All methods are asynchronous so that a
 * networked backend fits without touching the engine or the HTTP layer.
 *
 * How the folder is laid out. The records the seam moves are in records.ts, the options a
 * store is opened with in options.ts. The policy both backends share — retention, the
 * request-log and idempotency-key purges, their timers and batch size — is written once in
 * maintenance.ts, above a port of a few one-write calls each backend gives it (svix's
 * queue/mod.rs writes its policy once above a small backend the same way).
 *
 * The SQL is in sql/, one file per statement family — a table's statements: sql/runs.ts,
 * sql/outbox.ts, … — each statement with its SQLite and its PostgreSQL text side by side.
 * That is graphile-worker's way (src/sql/*.ts: the statements in a folder of their own, a small
 * file per operation), not pg-boss's dialect builder (src/dialect.ts: one builder renders both
 * dialects through primitives such as `greatest()` and `inArrayParam()`). A builder pays off
 * when the dialects differ in spelling only; ours differ in algorithm. SQLite claims runs from
 * a trigger-kept `ready` table on its single writer thread, PostgreSQL with SKIP LOCKED and
 * instance leases; SQLite's retention walks a bounded window in seq order, PostgreSQL deletes
 * with LIMIT in a subquery; SQLite inserts one prepared row at a time, PostgreSQL a batch with
 * `unnest`. A shared builder would hide those differences behind flags, while two short texts
 * next to each other show them, and show at a glance that the statements that differ only in
 * spelling (IFNULL/COALESCE, MAX/GREATEST, `?`/`$n`) still say the same thing. Each backend
 * runs its own statements: sqlite-ops.ts (the writer thread's ops), sqlite-reader.ts,
 * sqlite-purge.ts; postgres.ts, postgres-ops.ts, postgres-writer.ts, postgres-reader.ts,
 * postgres-instances.ts. The migrations stay with each backend's schema (sqlite-schema.ts,
 * postgres-schema.ts): they are append-only history, not statements to share.
 */
export interface Store {
  /**
   * Commits accepted events and queued runs in one transaction. Resolves only once the
   * commit is durable at the configured level (`store.durability`): callers answer 2xx
   * after this resolves, never before. Concurrent calls share commits (group commit).
   *
   * `keys` are idempotency keys committed in the same transaction as the events and runs each
   * one guards. A key already held (and not expired) is not a failure: that key's events and
   * runs are left out and the rest commits. Resolves to the indexes (into `keys`) of the keys
   * that were already held — also by a key earlier in the same commit — in ascending order;
   * `[]` when none was.
   *
   * `forwards` (forward mode, `runtime.kind: forward`): one outbox row per accepted action,
   * to send to the upstream gateway, committed in the same transaction as the event or run it
   * carries, and left out with it when the key guarding that event or run is held (matched by
   * {@link NewForward.key}, the event's or run's id).
   *
   * `request`: the request log's row of the request that brought these actions, committed in
   * the same transaction — an accepted request and its log row are one commit, and a failed
   * accept logs nothing. It is left out (not committed) when any of `keys` was held: that
   * request is answered as a replay of the first, and its caller logs it as such
   * ({@link Store.logRequests}).
   */
  accept(events: NewEvent[], runs: NewRun[], keys?: NewKey[], forwards?: NewForward[], request?: NewRequestLog): Promise<readonly number[]>;
  /**
   * Commits request-log rows in one transaction: the requests that were not accepted (refused,
   * reads, idempotent replays), batched off the request path by the listener's buffer
   * (store/request-log.ts). Rows are kept for `store.retainDays`; a row's `body` until its
   * `bodyUntil`, then the background purge drops it.
   */
  logRequests(rows: NewRequestLog[]): Promise<void>;
  /** The request log, newest first (by seq), filtered and paged on with `before` (a seq). */
  listRequests(opts: ListRequestsOptions): Promise<RequestRecord[]>;
  /** One row of the request log, its body included (when still kept). */
  getRequest(seq: number): Promise<RequestRecord | undefined>;
  /**
   * The stored answers of these keys (`NewKey.key` values), in order: undefined where the
   * key is unknown or older than the idempotency window. One indexed lookup per key.
   */
  findKeys(keys: string[]): Promise<(StoredKey | undefined)[]>;

  /**
   * The main session's events with seq > after, oldest first: at most `limit`, and with
   * `maxBytes`, only as many as fit in that many bytes of text (the UTF-8 size of each event's
   * string fields; an answer's JSON adds its own overhead) — but always at least one when
   * there is one, so that paging on with the last `seq` as `after` never stalls. Rows are read
   * one at a time, so neither memory nor the page grows with `limit` under a budget.
   */
  listEvents(after: number, limit: number, maxBytes?: number): Promise<EventRecord[]>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Most recently accepted first; `before`: only runs accepted before that run (paging on
   * with the last run id of a page). An unknown `before` gives no runs.
   */
  listRuns(opts: ListRunsOptions): Promise<RunRecord[]>;

  /**
   * How many runs are in each status, every status present (0 for none): the `hookrelay_runs`
   * gauge, read at each scrape. One aggregate, kept trivial so that every backend can answer
   * it (`SELECT status, COUNT(*) FROM runs GROUP BY status`); ended runs count until retention
   * purges them.
   */
  countRuns(): Promise<Record<RunStatus, number>>;

  /**
   * Atomically moves up to `limit` queued runs to `running` and returns them: the oldest
   * queued run of each session, skipping sessions that already have a running run (one
   * turn at a time per session). `rules`: flow control (per-mapping concurrency, paused
   * mappings; {@link ClaimRules}), kept across every instance on the same data.
   */
  claimRuns(limit: number, startedAt: string, rules?: ClaimRules): Promise<RunRecord[]>;
  /**
   * The sliding 60 s window of `key` (a mapping's `ratePerMinute`, CONTRACT.md §14): resolves
   * 0 when fewer than `limit` were admitted in the last 60 s — this one is then admitted and
   * counted — else the ms until one more would be (nothing counted). Shared by every instance
   * on the same data. Called only for mappings that set a rate.
   */
  takeRate(key: string, limit: number): Promise<number>;
  /**
   * Gives back a place {@link takeRate} admitted: the newest of `key`'s window. For a request
   * that took one and then acted on nothing — a concurrent request with its idempotency key
   * committed first, so it was answered as that one's replay, which the window does not count.
   */
  returnRate(key: string): Promise<void>;
  /**
   * Pauses (`true`) or resumes a mapping, by id (CONTRACT.md §14): stored, so that every
   * instance and the next start see it. Resuming releases nothing by itself: the gateways that
   * poll {@link flowState} do ({@link releaseWakes}), so a resume written by the CLI while no
   * gateway runs is carried out at the next start.
   */
  pauseMapping(id: string, paused: boolean): Promise<void>;
  /** The paused mappings and the sources holding wakes: what each gateway polls (two tiny tables). */
  flowState(): Promise<FlowState>;
  /**
   * Moves the held wakes of `source` (`mapping:<id>`) into the events, oldest first, each getting
   * its seq now; resolves with how many. Two instances releasing at once move each wake once.
   */
  releaseWakes(source: string): Promise<number>;
  /** Held wakes, and queued runs of paused mappings, per source: `hookrelay_mapping_held`. */
  countHeld(): Promise<Record<string, number>>;
  /**
   * Ends a run; its summary event, conversation turns and outbox row (`effects.delivery`,
   * the reply to send) are committed with it. Only a `running` run can end: otherwise
   * (unknown, still queued, already ended, requeued) it rejects with {@link StoreError}
   * `run_not_running` and commits nothing.
   */
  finishRun(runId: string, end: RunEnd, effects: RunEffects): Promise<void>;
  /**
   * Puts running runs back to queued, clearing `startedAt` (graceful shutdown: they are
   * resumed on next start). Ids of runs that are not running are ignored.
   */
  requeueRuns(runIds: string[]): Promise<void>;

  /** The last `limit` messages of a session's conversation, oldest first. */
  history(sessionKey: string, limit: number): Promise<HistoryMessage[]>;
  /**
   * Appends to a conversation, sets state keys, appends events to the main session and puts a
   * reply into the outbox, all in the same transaction (a heartbeat turn: its exchange, its
   * cursor, its `reply` event and the delivery of that reply).
   */
  appendHistory(
    sessionKey: string, messages: HistoryMessage[], state?: Record<string, string>, events?: NewEvent[], delivery?: NewDelivery,
  ): Promise<void>;
  /** Small durable key/value state: heartbeat cursor, the main session's last recipient. */
  getState(key: string): Promise<string | undefined>;

  /**
   * Claims up to `limit` pending outbox rows due at `now` (next_at ≤ now) whose lease has
   * expired or was never taken, oldest due first: each gets one more `attempts` and a lease
   * until `leaseUntil`, so no other claim takes it meanwhile. `nextAt`: when the earliest
   * pending row not returned falls due (undefined: none), for the sender's timer. A store
   * opened on a data directory clears the leases of the process that had it before.
   */
  claimDeliveries(now: string, limit: number, leaseUntil: string): Promise<{ deliveries: DeliveryRecord[]; nextAt?: string }>;
  /**
   * Records that the provider accepted part `part` (0-based) of a pending row: committed
   * before the next part is sent, so that a retry or restart resumes after it. Idempotent.
   */
  ackPart(id: number, part: number): Promise<void>;
  /** Puts a pending row back for another attempt at `at` (ISO), releasing its lease; `error`: why. */
  retryDelivery(id: number, at: string, error: string): Promise<void>;
  /**
   * Settles a pending row as delivered or failed and, in the same transaction, its effects:
   * the run's `deliveredTo` or error (for rows of a run), its summary event, state keys (the
   * main session's last recipient). A row no longer pending rejects with {@link StoreError}
   * `constraint` and commits nothing: a delivery settles once.
   */
  settleDelivery(id: number, outcome: DeliveryOutcomeRecord, effects: SettleEffects): Promise<void>;

  /**
   * Takes over what an instance that is gone left behind. `runs`: up to `limit` runs it left
   * `running`, to end as interrupted, each returned to one caller only and still `running`
   * (end it with `finishRun`). `deliveries`: how many of its outbox leases were released, so
   * that their pending deliveries are claimable at once (the caller kicks its outbox: no
   * timer of it is waiting for them). SQLite (the only instance: its data-directory lock): the
   * runs found running before this store claimed any, i.e. the process before's, and no
   * deliveries (opening the store cleared the leases). PostgreSQL: what instances whose lease
   * (`store.leaseSeconds`) has expired held. Never a live instance's.
   */
  takeOver(limit: number): Promise<TakenOver>;

  /**
   * Heartbeat leadership: one instance at a time runs heartbeats. `onLeader(true)` when this
   * one becomes the leader, `onLeader(false)` when it loses it; `onTrigger` when another
   * instance accepted something that asks for a heartbeat now ({@link NewEvent.wakesNow}).
   * Resolves after the first attempt (SQLite: the leader at once; triggers stay local).
   */
  lead(handlers: LeaderHandlers): Promise<Leadership>;

  /**
   * Why commits fail, while they do (CONTRACT.md §8): from a commit that failed for want of
   * the backend (a full disk, PostgreSQL restarting) until one succeeds; undefined otherwise.
   * Words for senders and /healthz: the cause, never a path, URL or payload text.
   */
  commitProblem(): string | undefined;

  /** Flushes pending commits and closes (releasing the data directory); later calls reject. */
  close(): Promise<void>;
}

/** What {@link Store.takeOver} found of a gone instance. */
export interface TakenOver {
  runs: RunRecord[];
  /** Its outbox leases released: that many pending deliveries are claimable now. */
  deliveries: number;
}

/** See {@link Store.lead}. */
export interface LeaderHandlers {
  onLeader(leading: boolean): void;
  onTrigger(): void;
}

/** See {@link Store.lead}: `stop` gives leadership up (and stops trying). */
export interface Leadership {
  stop(): Promise<void>;
}

/**
 * The read side of a store, opened without taking it over (no writer, no migration, no lock):
 * what `hookrelay events`, `runs`, `requests` and `fixture` use beside a running server.
 */
export type StoreReader = Pick<Store, 'listEvents' | 'getRun' | 'listRuns' | 'listRequests' | 'getRequest' | 'close'>;

/**
 * Why a store call failed. `closed`: after {@link Store.close}; `unavailable`: the backend
 * cannot write (its writer died, the disk failed, its database file was removed) — answer
 * 503 and retry later; `locked`: at open, another process (or store) holds the data directory;
 * `constraint`: the data broke a rule (duplicate id, bad enum value); `run_not_running`:
 * see {@link Store.finishRun}; `failed`: anything else.
 *
 * Recovery note: runs left `running` by a crash are found with
 * `listRuns({ status: 'running', limit })` at start and ended with `finishRun`.
 */
export class StoreError extends Error {
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

export type StoreErrorCode = 'closed' | 'unavailable' | 'locked' | 'constraint' | 'run_not_running' | 'failed';

/**
 * A store failure that passes (a full disk, PostgreSQL restarting): the write may be tried
 * again, and the store says so itself, once every few seconds (commit-health.ts).
 */
export function isStoreDown(err: unknown): err is StoreError {
  return err instanceof StoreError && err.code === 'unavailable';
}
