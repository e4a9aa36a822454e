import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DefaultState, ParameterizedContext } from 'koa';
import type { ErrorCode } from '../errors.js';
import type { Sender } from './auth.js';
import type { ReadState } from './body.js';
import type { Route } from './routes-table.js';

const NO_HEADERS: ReadonlySet<string> = new Set();

/**
 * One request's typed record, filled by the gate's single parse (STYLE.md #13) and read by every
 * layer after it; made with every field present, so that all records have one shape.
 */
export interface Exchange {
  readonly ctx: HookContext;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** `performance.now()` when it arrived; 0 when nothing records requests. */
  start: number;
  /** The X-Request-Id the answer carries, when the access log logs lines. */
  requestId: string | undefined;
  /** The gate's decision (routes-table.ts); undefined until routed, and for a target that cannot be parsed. */
  route: Route | undefined;
  /** The label of logs and metrics (routes-table.ts): the route kind's, then the mapping's once one matched. */
  label: string;
  /** Let through without the token: a signature must stand in for it (`auth: signature`, signatures.ts). */
  bySignature: boolean;
  /** Who a scoped or named hooks token says sent it (its name and routes, never the token). */
  sender: Sender | undefined;
  session: string | undefined;
  /** Under the hooks path (`/metrics` aside): the request gets a row in the request log (request-log.ts). */
  logged: boolean;
  keepBodies: number;
  credentialHeaders: ReadonlySet<string>;
  /** A console replay of the request-log row of this seq (replay.ts checked its marker). */
  replayOf: number | undefined;
  reading: ReadState | undefined;
  /** The body's bytes as read (decoded): what a signature, an idempotency key and the request log see. */
  raw: Buffer | undefined;
  error: ErrorCode | undefined;
  /** Answered with the stored first answer of its idempotency key (`Idempotent-Replayed`). */
  replayed: boolean;
  /** Its request-log row was committed with its accept: the close hook makes none. */
  committed: boolean;
  answered: boolean;
  continued: boolean;
}

/** The request's record as the app's typed context extension, `ctx.exchange` (https://koajs.com/#app-context). */
export interface ExchangeContext {
  readonly exchange: Exchange;
}

export type HookContext = ParameterizedContext<DefaultState, ExchangeContext>;

/** Makes the request's record and puts it on its context. */
export function openExchange(ctx: HookContext): Exchange {
  const ex: Exchange = {
    ctx,
    req: ctx.req,
    res: ctx.res,
    start: 0,
    requestId: undefined,
    route: undefined,
    label: 'unmatched',
    bySignature: false,
    sender: undefined,
    session: undefined,
    logged: false,
    keepBodies: 0,
    credentialHeaders: NO_HEADERS,
    replayOf: undefined,
    reading: undefined,
    raw: undefined,
    error: undefined,
    replayed: false,
    committed: false,
    answered: false,
    continued: false,
  };
  (ctx as { exchange: Exchange }).exchange = ex;
  return ex;
}
