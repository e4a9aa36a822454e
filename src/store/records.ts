import type { Provider, ProviderOrLast, SessionMode, Thinking, WakeMode } from '../config/types.js';
import type { RunErrorCode } from '../run-errors.js';

/**
 * The records the store keeps and hands back: what callers pass in (`New…`) and what they
 * read (`…Record`). Plain data shared by every floor that talks to the store (engine,
 * dispatch, http, console, cli) and by both backends; the seam that moves them is
 * {@link Store} in store.ts.
 */

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
  /**
   * A wake of a paused mapping (CONTRACT.md §14): committed with the others but held out of
   * the events (and of the heartbeat) until {@link Store.releaseWakes}; it gets its seq then.
   */
  held?: boolean;
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

/** What a gateway polls of flow control ({@link Store.flowState}). */
export interface FlowState {
  /** The paused mappings' ids, in no order. */
  paused: string[];
  /** The sources (`mapping:<id>`) that hold wakes. */
  held: string[];
}

export interface EventRecord extends NewEvent {
  seq: number;
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out';
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'succeeded', 'failed', 'timed_out'];
/** The statuses a run ends with: only these may end it, and only runs in these are ever purged. */
export const ENDED_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'timed_out'];

/**
 * Flow control in a claim (CONTRACT.md §14), by run `source` (`mapping:<id>`): the runs of a
 * `held` source (a paused mapping) are not claimed; of a source in `limits`, at most that many
 * are running at once — across every instance on the same data. Runs that wait for either
 * stay queued and are not counted against the claim's `limit`.
 */
export interface ClaimRules {
  held?: readonly string[];
  limits?: Readonly<Record<string, number>>;
}

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
  /** As the sender gave it (absent: persistent); `isolated` runs from an empty history. */
  sessionMode?: SessionMode;
  /** Fence source: `agent` or `mapping:<id>`. */
  source: string;
  unsafe: boolean;
  /** ISO time of acceptance. */
  createdAt: string;
  /** Where the run's outcome is POSTed when it ends (docs/callbacks.md). */
  callbackUrl?: string;
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
  /** The run's callback (its outbox row of kind `callback`), once the run ended. */
  callback?: RunCallback;
}

/** How a run's callback stands (docs/callbacks.md). */
export interface RunCallback {
  status: DeliveryStatus;
  attempts: number;
  /** The last failure (also while pending). */
  error?: string;
}

/**
 * A run's callback (docs/callbacks.md), as an outbox row of kind `callback`: committed with the
 * run's end, one part (the body), POSTed to `url` signed as Standard Webhooks with `webhook-id`
 * the run id on every attempt. Target text of the row: `callback:<host>` (the URL may carry a
 * token in its query; logs and the row's target never show more than the host).
 */
export interface NewCallback {
  kind: 'callback';
  url: string;
  body: string;
  /** ISO time; the row is due at once. */
  createdAt: string;
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
export type DeliveryRecord = (Omit<NewDelivery, 'parts'> | Omit<NewForward, 'body'> | Omit<NewCallback, 'body'>) & DeliveryState;

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
  /** The run's callback, into the outbox (docs/callbacks.md). */
  callback?: NewCallback;
}

export interface HistoryMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * One row of the request log (CONTRACT.md §11): one answered request under the hooks path.
 * Never a token, secret or signature. `body` only under `hooks.keepBodies`, and with it
 * (purged with it) `headers` and `query`: the request's own, minus every credential
 * (src/credentials.ts), bounded.
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
  /** With a kept body: its headers (names lower case) but credentials, hop-by-hop and size headers (src/credentials.ts keptHead). */
  headers?: Record<string, string>;
  /** With a kept body: its raw query string (no `?`), without the `token` parameter. */
  query?: string;
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
