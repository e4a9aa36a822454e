import type { Explanation } from '../match-explanation.js';
import type { MappingFailure } from '../failure.js';
import type { Provider, ProviderOrLast, SessionMode, Thinking, WakeMode } from '../config/types.js';
import type { RunErrorCode } from '../run-errors.js';

/** The records the store keeps: what callers pass in (`New…`) and read (`…Record`); the seam is store.ts. */

/** `reply`: what a heartbeat turn answered (not only HEARTBEAT_OK); never fed back to the heartbeat. */
export type EventKind = 'wake' | 'summary' | 'reply';

export interface NewEvent {
  id: string;
  kind: EventKind;
  text: string;
  /** `wake`, `mapping:<id>` for listener text; `run:<runId>` for summaries; `heartbeat` for replies. */
  source: string;
  at: string;
  /** True when the text may reach the model without the untrusted-content fence. */
  unsafe: boolean;
  /** Not stored: the event asks for a heartbeat now; several instances tell their leader in its commit. */
  wakesNow?: boolean;
  /** A wake of a paused mapping (CONTRACT.md §14): held out of the events until released, when it gets its seq. */
  held?: boolean;
}

/** An idempotency key and what it guards (CONTRACT.md §8). */
export interface NewKey {
  /** The scoped key's hash: the store never sees the key itself. */
  key: string;
  /** What the key was used for: a repeat with another one is refused. */
  requestHash: string;
  status: number;
  body: string;
  at: string;
  /** The events and runs this key guards: left out when it is already held. */
  eventIds: string[];
  runIds: string[];
}

export type StoredKey = Pick<NewKey, 'requestHash' | 'status' | 'body' | 'at'>;

/** What a gateway polls of flow control: the paused mappings' ids, the sources (`mapping:<id>`) that hold wakes. */
export interface FlowState {
  paused: string[];
  held: string[];
}

export interface EventRecord extends NewEvent {
  seq: number;
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out';
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'succeeded', 'failed', 'timed_out'];
/** The statuses a run ends with; only runs in these are ever purged. */
export const ENDED_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'timed_out'];

/** Flow control in a claim (CONTRACT.md §14), by run source: `held` ones wait; of one in `limits`, at most that many run at once. */
export interface ClaimRules {
  held?: readonly string[];
  limits?: Readonly<Record<string, number>>;
}

export interface ListRunsOptions {
  limit: number;
  status?: RunStatus;
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
  /** Absent: persistent; `isolated` runs from an empty history. */
  sessionMode?: SessionMode;
  source: string;
  unsafe: boolean;
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
  /** The stable code of `error` (src/run-errors.ts). */
  errorCode?: RunErrorCode;
  deliveredTo?: string;
  delivery?: RunDelivery;
  /** Forward mode: the upstream's 2xx answer (CONTRACT.md §9). */
  forwarded?: Forwarded;
  callback?: RunCallback;
}

/** How a run's callback stands (docs/callbacks.md); `error`: the last failure. */
export type RunCallback = Omit<RunDelivery, 'target'>;

/** A run's callback (docs/callbacks.md): an outbox row committed with the run's end; its target shows only the URL's host. */
export interface NewCallback {
  kind: 'callback';
  url: string;
  body: string;
  createdAt: string;
}

export interface Forwarded {
  status: number;
  upstreamRunId?: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** How a run's delivery stands (CONTRACT.md §9); `target`: `provider:to`; `error`: the last failure. */
export interface RunDelivery {
  status: DeliveryStatus;
  target: string;
  attempts: number;
  error?: string;
}

/** A reply for the outbox: a run's (settling it posts its summary) or a heartbeat's (its target becomes the last recipient). */
export interface NewDelivery {
  kind: 'run' | 'heartbeat';
  provider: Provider;
  to: string;
  /** The text split by the provider's limit, in order. */
  parts: string[];
  createdAt: string;
}

/**
 * Forward mode: an accepted action for the upstream gateway (`POST {runtime.forward.url}/{path}`).
 * `key`: the event's or run's id, the idempotency key of every attempt (and an `agent` row's run id).
 */
export interface NewForward {
  kind: 'forward';
  path: 'wake' | 'agent';
  key: string;
  body: string;
  createdAt: string;
}

export interface DeliveryState {
  id: number;
  runId?: string;
  parts: string[];
  target: string;
  /** Parts the provider accepted: the next attempt starts at `parts[partsSent]`. */
  partsSent: number;
  status: DeliveryStatus;
  /** Attempts claimed so far, this one included. */
  attempts: number;
  nextAt: string;
  error?: string;
}

export type DeliveryRecord = (Omit<NewDelivery, 'parts'> | Omit<NewForward, 'body'> | Omit<NewCallback, 'body'>) & DeliveryState;

export type DeliveryOutcomeRecord = { status: 'delivered'; at: string } | { status: 'failed'; at: string; error: string };

export interface SettleEffects {
  summary?: NewEvent;
  /** For a run's row: its delivery's outcome; a `forward` row also ends its (queued) run. */
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

/** What ends with a run: its summary, its reply and callback into the outbox, the turns of its conversation. */
export interface RunEffects {
  summary?: NewEvent;
  delivery?: NewDelivery;
  history?: HistoryMessage[];
  callback?: NewCallback;
}

export interface HistoryMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * One row of the request log (CONTRACT.md §11), never a token, secret or signature. `body`
 * only under `hooks.keepBodies`, and with it `headers` and `query` less every credential (src/credentials.ts).
 */
export interface NewRequestLog {
  at: string;
  requestId?: string;
  method: string;
  /** The normalised path, capped (no query: it may carry the token). */
  path: string;
  route: string;
  status: number;
  /** From the request line to the answer (for an accepted one: to its commit being queued). */
  ms: number;
  eventIds: string[];
  runIds: string[];
  /** Answered as an idempotent replay (Idempotent-Replayed). */
  replayed: boolean;
  error?: string;
  contentType?: string;
  userAgent?: string;
  body?: string;
  bodyUntil?: string;
  headers?: Record<string, string>;
  /** The raw query string (no `?`), without the `token` parameter. */
  query?: string;
  replayOf?: number;
  /** The `name` of the scoped hooks token it came with (never the token). */
  sender?: string;
  /** Why no mapping took it (a 404 `no_mapping`), as `keptExplanation` keeps it. */
  explanation?: Explanation;
  /** The templates, `match.when` expressions and transforms that failed on it, without payload data (CONTRACT.md §16). */
  failures?: MappingFailure[];
}

export interface RequestRecord extends NewRequestLog {
  seq: number;
}

export interface ListRequestsOptions {
  limit: number;
  before?: number;
  /** 2, 3, 4 or 5: only statuses 200–299, … */
  statusClass?: number;
  route?: string;
  replayOf?: number;
}
