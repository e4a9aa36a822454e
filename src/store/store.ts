import type { Provider, ProviderOrLast, Thinking, WakeMode } from '../config/types.js';
import type { RunErrorCode } from '../run-errors.js';

/**
 * The store seam. Everything the gateway answered 2xx for is behind this interface, and
 * nothing else in the code talks to a database: the embedded SQLite store implements it
 * today, a networked backend (PostgreSQL, for several instances) later. All methods are
 * asynchronous so that such a backend fits without touching the engine or the HTTP layer.
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
   * turn at a time per session).
   */
  claimRuns(limit: number, startedAt: string): Promise<RunRecord[]>;
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
 * what `hookrelay events` and `hookrelay runs` use beside a running server.
 */
export type StoreReader = Pick<Store, 'listEvents' | 'getRun' | 'listRuns' | 'close'>;

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

/** `reply`: what a heartbeat turn answered (not only HEARTBEAT_OK); never fed back to the heartbeat. */
export type EventKind = 'wake' | 'summary' | 'reply';

export interface NewEvent {
  id: string;
  kind: EventKind;
  text: string;
  /** `wake`, `mapping:<id>` for listener text; `run:<runId>` for summaries; `heartbeat` for replies. */
  source: string;
  /** ISO time. */
  at: string;
  /** True when the text may reach the model without the untrusted-content fence. */
  unsafe: boolean;
  /**
   * Not stored: the event asks for a heartbeat now (a `now` wake, the summary of a run with
   * `wakeMode: now`). A store shared by several instances tells the heartbeat leader in the
   * commit that stores it (PostgreSQL: NOTIFY, delivered on COMMIT only).
   */
  wakesNow?: boolean;
}

/** An idempotency key and what it guards (CONTRACT.md §8). */
export interface NewKey {
  /** The scoped key's hash (`scopedKeyHash`): the store never sees the key itself. */
  key: string;
  /** What the key was used for (`requestHash`): a repeat with another one is refused. */
  requestHash: string;
  /** The first answer, replayed to every repeat. */
  status: number;
  body: string;
  /** ISO time of acceptance: the window counts from it. */
  at: string;
  /** Ids of the events and runs this key guards: left out when the key is already held. */
  eventIds: string[];
  runIds: string[];
}

export type StoredKey = Pick<NewKey, 'requestHash' | 'status' | 'body' | 'at'>;

export interface EventRecord extends NewEvent {
  seq: number;
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out';
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'succeeded', 'failed', 'timed_out'];

export interface ListRunsOptions {
  limit: number;
  status?: RunStatus;
  /** A run id: only runs accepted before it. */
  before?: string;
}

export interface NewRun {
  runId: string;
  sessionKey: string;
  message: string;
  name?: string;
  model?: string;
  thinking?: Thinking;
  timeoutSeconds?: number;
  wakeMode: WakeMode;
  deliver: boolean;
  provider: ProviderOrLast;
  to?: string;
  /** Fence source: `agent` or `mapping:<id>`. */
  source: string;
  unsafe: boolean;
  /** ISO time of acceptance. */
  createdAt: string;
}

export interface RunRecord extends NewRun {
  status: RunStatus;
  startedAt?: string;
  endedAt?: string;
  reply?: string;
  error?: string;
  /** The stable code of `error` (src/run-errors.ts); absent on runs ended before codes existed. */
  errorCode?: RunErrorCode;
  /** `provider:to` when the reply was delivered. */
  deliveredTo?: string;
  /** The run's outbox row, when its reply was put there. */
  delivery?: RunDelivery;
  /** Forward mode: the upstream's 2xx answer to the forwarded run (CONTRACT.md §9). */
  forwarded?: Forwarded;
}

/** What the upstream gateway answered to a forwarded run: its HTTP status and its own run id. */
export interface Forwarded {
  status: number;
  upstreamRunId?: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** How a run's delivery stands (CONTRACT.md §9). */
export interface RunDelivery {
  status: DeliveryStatus;
  /** `provider:to`. */
  target: string;
  attempts: number;
  /** The last failure (also while pending: why the last attempt did not get through). */
  error?: string;
}

/**
 * A reply to put into the outbox. `run`: a run's reply (settling it ends the run's delivery
 * and posts its summary); `heartbeat`: a heartbeat reply (settling it as delivered makes the
 * target the main session's last recipient).
 */
export interface NewDelivery {
  kind: 'run' | 'heartbeat';
  provider: Provider;
  to: string;
  /** The text split by the provider's limit, in order. */
  parts: string[];
  /** ISO time; the row is due at once. */
  createdAt: string;
}

/**
 * Forward mode: an accepted action to send to the upstream gateway, as an outbox row of kind
 * `forward` (one part: the body). `path`: `POST {runtime.forward.url}/{path}`; `key`: the
 * event's or run's id, sent as X-OpenClaw-Idempotency-Key on every attempt; for `agent` rows
 * it is also the row's run id (settling the row ends that run). `body`: the JSON to send.
 * Target text of the row: `forward:<path>`.
 */
export interface NewForward {
  kind: 'forward';
  path: 'wake' | 'agent';
  key: string;
  body: string;
  /** ISO time; the row is due at once. */
  createdAt: string;
}

/** The bookkeeping every outbox row has, whatever it carries. */
export interface DeliveryState {
  id: number;
  runId?: string;
  /** What the row sends, in order: a reply's parts; a forward's one part, its body. */
  parts: string[];
  /** `provider:to`. */
  target: string;
  /** Parts the provider accepted: the next attempt starts at `parts[partsSent]`. */
  partsSent: number;
  status: DeliveryStatus;
  /** Attempts claimed so far, this one included. */
  attempts: number;
  nextAt: string;
  error?: string;
}

/** An outbox row: a reply for a provider, or (forward mode) an action for the upstream. */
export type DeliveryRecord = (Omit<NewDelivery, 'parts'> | Omit<NewForward, 'body'>) & DeliveryState;

export type DeliveryOutcomeRecord = { status: 'delivered'; at: string } | { status: 'failed'; at: string; error: string };

export interface SettleEffects {
  summary?: NewEvent;
  /**
   * For a run's row: what its record says of the delivery. A `forward` row also ends its run
   * (`status`, `endedAt`; the run is still queued: no local runner claims it) and sets
   * `forwarded`.
   */
  run?: {
    deliveredTo?: string; error?: string; errorCode?: RunErrorCode;
    status?: 'succeeded' | 'failed'; endedAt?: string; forwarded?: Forwarded;
  };
  state?: Record<string, string>;
}

export interface RunEnd {
  status: 'succeeded' | 'failed' | 'timed_out';
  endedAt: string;
  reply?: string;
  error?: string;
  errorCode?: RunErrorCode;
  deliveredTo?: string;
}

export interface RunEffects {
  summary?: NewEvent;
  /** The reply to deliver, into the outbox. */
  delivery?: NewDelivery;
  /** Turns appended to the run's session conversation. */
  history?: HistoryMessage[];
}

export interface HistoryMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * One row of the request log (CONTRACT.md §11): one answered request under the hooks path.
 * Never a token, secret, signature or header value beyond `contentType` and `userAgent`
 * (capped, control characters escaped); `body` only under `hooks.keepBodies`.
 */
export interface NewRequestLog {
  /** ISO time the request arrived. */
  at: string;
  /** Its X-Request-Id (the sender's, when it sent a plain one; else ours). */
  requestId?: string;
  method: string;
  /** The normalised path, capped (no query: it may carry the token). */
  path: string;
  /** The route label (http/route-label.ts): `wake`, `agent`, `mapping:<id>`, `unmatched`, … */
  route: string;
  status: number;
  /** Milliseconds from the request line to the answer (for an accepted one: to its commit being queued). */
  ms: number;
  /** The events and runs it brought (accepted ones). */
  eventIds: string[];
  runIds: string[];
  /** Answered as an idempotent replay of an earlier request (Idempotent-Replayed). */
  replayed: boolean;
  /** The error code it was refused with (`invalid_signature`, `stale_signature`: a signature failure). */
  error?: string;
  contentType?: string;
  userAgent?: string;
  /** The body as UTF-8 text, with `hooks.keepBodies` > 0. */
  body?: string;
  /** ISO time after which the body is purged. */
  bodyUntil?: string;
  /** The console replayed the request of this seq (a new request through the current mappings). */
  replayOf?: number;
  /** The `name` of the scoped hooks token it came with (`hooks.tokens[].name`; never the token). */
  sender?: string;
}

export interface RequestRecord extends NewRequestLog {
  seq: number;
}

export interface ListRequestsOptions {
  limit: number;
  /** A seq: only rows before it. */
  before?: number;
  /** 2, 3, 4 or 5: only statuses 200–299, … */
  statusClass?: number;
  route?: string;
  /** Only the replays of this row. */
  replayOf?: number;
}

export type { Provider };
