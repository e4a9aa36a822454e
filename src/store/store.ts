import type {
  ClaimRules, DeliveryOutcomeRecord, DeliveryRecord, FlowState, EventRecord, HistoryMessage, ListRequestsOptions, ListRunsOptions, NewDelivery, NewEvent, NewForward,
  NewKey, NewRequestLog, NewRun, RequestRecord, RunEffects, RunEnd, RunRecord, RunStatus, SettleEffects, StoredKey,
} from './records.js';

/**
 * The store seam: nothing else talks to a database. shell.ts implements it once over a dialect
 * port (dialect.ts) for SQLite and PostgreSQL; spec/unit/store/contract/ holds both to it.
 */
export interface Store {
  /**
   * Commits accepted events, runs, their idempotency `keys`, forward rows and the request's log
   * row in one durable transaction (callers answer 2xx after it). A key already held leaves out
   * the rows it guards and the log row; resolves to the held keys' indexes, ascending.
   */
  accept(events: NewEvent[], runs: NewRun[], keys?: NewKey[], forwards?: NewForward[], request?: NewRequestLog): Promise<readonly number[]>;
  /** Commits request-log rows (refused, reads, replays) in one transaction; kept `store.retainDays`, a body until its `bodyUntil`. */
  logRequests(rows: NewRequestLog[]): Promise<void>;
  /** The request log, newest first (by seq), filtered and paged on with `before` (a seq). */
  listRequests(opts: ListRequestsOptions): Promise<RequestRecord[]>;
  /** One row of the request log, its body included (when still kept). */
  getRequest(seq: number): Promise<RequestRecord | undefined>;
  /** The stored answers of these keys, in order: undefined where unknown or older than the idempotency window. */
  findKeys(keys: string[]): Promise<(StoredKey | undefined)[]>;
  /** Events with seq > after, oldest first: at most `limit`, within `maxBytes` of text but at least one, so paging never stalls. */
  listEvents(after: number, limit: number, maxBytes?: number): Promise<EventRecord[]>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** Most recently accepted first; `before`: only runs accepted before that run (an unknown one gives none). */
  listRuns(opts: ListRunsOptions): Promise<RunRecord[]>;
  /** How many runs are in each status, every status present: the `hookrelay_runs` gauge, kept as changes commit (sql/tallies.ts). */
  countRuns(): Promise<Record<RunStatus, number>>;
  /** Moves up to `limit` queued runs to `running`: the oldest of each session that has none running, under the flow `rules`. */
  claimRuns(limit: number, startedAt: string, rules?: ClaimRules): Promise<RunRecord[]>;
  /** The sliding 60 s window of `key` (CONTRACT.md §14): 0 when admitted (and counted), else the ms until one more would be. */
  takeRate(key: string, limit: number): Promise<number>;
  /** Gives back the newest place {@link takeRate} admitted (a request then answered as a replay). */
  returnRate(key: string): Promise<void>;
  /** Pauses or resumes a mapping (CONTRACT.md §14), stored; the gateways polling {@link flowState} release what it held. */
  pauseMapping(id: string, paused: boolean): Promise<void>;
  /** The paused mappings and the sources holding wakes. */
  flowState(): Promise<FlowState>;
  /** Moves the held wakes of `source` into the events, oldest first, each once; resolves with how many. */
  releaseWakes(source: string): Promise<number>;
  /** Held wakes, and queued runs of paused mappings, per source: `hookrelay_mapping_held`. */
  countHeld(): Promise<Record<string, number>>;
  /** Ends a running run with its effects in one transaction; a run not running rejects `run_not_running`. */
  finishRun(runId: string, end: RunEnd, effects: RunEffects): Promise<void>;
  /** Puts running runs back to queued (graceful shutdown); others are ignored. */
  requeueRuns(runIds: string[]): Promise<void>;
  /** The last `limit` messages of a session's conversation, oldest first. */
  history(sessionKey: string, limit: number): Promise<HistoryMessage[]>;
  /** A heartbeat turn in one transaction: its exchange, state keys, events and the delivery of its reply. */
  appendHistory(
    sessionKey: string, messages: HistoryMessage[], state?: Record<string, string>, events?: NewEvent[], delivery?: NewDelivery,
  ): Promise<void>;
  /**
   * Keeps the secret a sender gave in its handshake for a mapping (Asana's `X-Hook-Secret`,
   * CONTRACT.md §15): only when none is kept yet, or in its place with `replace`; resolves with
   * the secret kept now, so that a caller sees whether its own was.
   */
  keepHookSecret(mappingId: string, secret: string, replace: boolean): Promise<string>;
  /** The secret {@link keepHookSecret} kept for a mapping. */
  hookSecret(mappingId: string): Promise<string | undefined>;
  /** Small durable key/value state: heartbeat cursor, the main session's last recipient. */
  getState(key: string): Promise<string | undefined>;
  /** Leases up to `limit` pending outbox rows due at `now`, oldest first; `nextAt`: when the next one falls due. */
  claimDeliveries(now: string, limit: number, leaseUntil: string): Promise<{ deliveries: DeliveryRecord[]; nextAt?: string }>;
  /** Records that the provider accepted part `part` (0-based) of a pending row, before the next is sent. Idempotent. */
  ackPart(id: number, part: number): Promise<void>;
  /** Puts a pending row back for another attempt at `at` (ISO), releasing its lease. */
  retryDelivery(id: number, at: string, error: string): Promise<void>;
  /** Settles a pending row with its effects in one transaction; once only (else `constraint`). */
  settleDelivery(id: number, outcome: DeliveryOutcomeRecord, effects: SettleEffects): Promise<void>;
  /** What a gone instance left: up to `limit` of its running runs, each to one caller, and its outbox leases released. */
  takeOver(limit: number): Promise<TakenOver>;
  /** Heartbeat leadership, one instance at a time; resolves after the first attempt (SQLite: the leader at once). */
  lead(handlers: LeaderHandlers): Promise<Leadership>;
  /** Why commits fail, while they do (CONTRACT.md §8): the cause in words, never a path, URL or payload. */
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

/** The read side of a store, opened beside a running server (no writer, no migration, no lock). */
export type StoreReader = Pick<Store, 'listEvents' | 'getRun' | 'listRuns' | 'listRequests' | 'getRequest' | 'close'>;

/** Why a store call failed; `unavailable`: the backend cannot write (503, retry later). */
export class StoreError extends Error {
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

export type StoreErrorCode = 'closed' | 'unavailable' | 'locked' | 'constraint' | 'run_not_running' | 'failed';

/** A store failure that passes (a full disk, PostgreSQL restarting): the write may be tried again. */
export function isStoreDown(err: unknown): err is StoreError {
  return err instanceof StoreError && err.code === 'unavailable';
}
