import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DefaultState, ParameterizedContext } from 'koa';
import type { ErrorCode } from '../errors.js';
import type { Explanation } from '../match-explanation.js';
import type { MappingFailure } from '../failure.js';
import type { Sender } from './auth.js';
import type { ReadState } from './body.js';
import type { Route } from './routes-table.js';

const NO_HEADERS: ReadonlySet<string> = new Set();

/**
 * One request's typed record, filled by the gate's single parse (STYLE.md #13) and read by every
 * layer after it; a class, so that all records have one shape.
 */
export class Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** `performance.now()` when it arrived; 0 when nothing records requests. */
  start = 0;
  /** The X-Request-Id the answer carries, when the access log logs lines. */
  requestId: string | undefined = undefined;
  /** The gate's decision (routes-table.ts); undefined until routed, and for a target that cannot be parsed. */
  route: Route | undefined = undefined;
  /** The label of logs and metrics (routes-table.ts): the route kind's, then the mapping's once one matched. */
  label = 'unmatched';
  /** Let through without the token: a signature must stand in for it (`auth: signature`, signatures.ts). */
  bySignature = false;
  /** Who a scoped or named hooks token says sent it (its name and routes, never the token). */
  sender: Sender | undefined = undefined;
  session: string | undefined = undefined;
  /** Under the hooks path (`/metrics` aside): the request gets a row in the request log (request-log.ts). */
  logged = false;
  keepBodies = 0;
  credentialHeaders: ReadonlySet<string> = NO_HEADERS;
  /** A console replay of the request-log row of this seq (replay.ts checked its marker). */
  replayOf: number | undefined = undefined;
  reading: ReadState | undefined = undefined;
  /** The body's bytes as read (decoded): what a signature, an idempotency key and the request log see. */
  raw: Buffer | undefined = undefined;
  error: ErrorCode | undefined = undefined;
  /** Why no mapping took it (a 404 `no_mapping`): its request-log row keeps it. */
  explanation: Explanation | undefined = undefined;
  /** The templates, `match.when` expressions and transforms that failed on it (its request-log row keeps them). */
  failures: MappingFailure[] | undefined = undefined;
  /** Answered with the stored first answer of its idempotency key (`Idempotent-Replayed`). */
  replayed = false;
  /** Its request-log row was committed with its accept: the close hook makes none. */
  committed = false;
  answered = false;
  continued = false;

  constructor(readonly ctx: HookContext) {
    this.req = ctx.req;
    this.res = ctx.res;
    (ctx as { exchange: Exchange }).exchange = this;
  }
}

/** The request's record as the app's typed context extension, `ctx.exchange` (https://koajs.com/#app-context). */
export interface ExchangeContext {
  readonly exchange: Exchange;
}

export type HookContext = ParameterizedContext<DefaultState, ExchangeContext>;
