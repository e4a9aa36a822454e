import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DefaultState, ParameterizedContext } from 'koa';
import type { ErrorCode } from '../errors.js';
import type { Sender } from './auth.js';
import type { ReadState } from './body.js';
import type { Route } from './routes-table.js';

const NO_HEADERS: ReadonlySet<string> = new Set();

/**
 * One request, as every layer of the listener learns about it: the one typed record that the
 * gate's single parse (STYLE.md #13) fills in front of the app and that the app, the handlers, the
 * one answer() (answer.ts) and the close hook (access-log.ts) read and add to. Made once per
 * request (server.ts), with every field present, so that all records have one shape: one
 * object and one symbol on the request, instead of a property per fact on Node's request and
 * response objects (which gives them many shapes and slows every access to them).
 */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** `performance.now()` when it arrived; 0 when nothing records requests (access-log.ts). */
  start: number;
  /** The X-Request-Id the answer carries, when the access log logs lines (else a sender's own one is read from the headers). */
  requestId: string | undefined;
  /** The gate's decision (routes-table.ts); undefined until routed, and for a target that cannot be parsed. */
  route: Route | undefined;
  /** The route label of logs and metrics (route-label.ts): the route kind's, then the mapping's once one matched. */
  label: string;
  /** Let through without the token: a signature must stand in for it (`auth: signature`, signatures.ts). */
  bySignature: boolean;
  /** Who a scoped or named hooks token says sent it (its name and routes, never the token). */
  sender: Sender | undefined;
  /** The console session the request came with, once the console verified its cookie. */
  session: string | undefined;
  /** Under the hooks path (`/metrics` aside): the request gets a row in the request log (request-log.ts). */
  logged: boolean;
  /** `hooks.keepBodies` of the config that took it: days its row keeps the body (0: none). */
  keepBodies: number;
  /** The header names its row never keeps with the body (credentials.ts credentialHeaders, of the config that took it). */
  credentialHeaders: ReadonlySet<string>;
  /** A console replay of the request-log row of this seq (replay.ts checked its marker). */
  replayOf: number | undefined;
  /** The body being read (body.ts); undefined before and after. */
  reading: ReadState | undefined;
  /** The body's bytes as read (decoded): what a signature, an idempotency key and the request log see. */
  raw: Buffer | undefined;
  /** The error code it was refused or failed with. */
  error: ErrorCode | undefined;
  /** Answered with the stored first answer of its idempotency key (`Idempotent-Replayed`). */
  replayed: boolean;
  /** Its request-log row was committed with its accept: the close hook makes none. */
  committed: boolean;
  /** answer() wrote its answer (or a stream began). */
  answered: boolean;
  /** The client was told `100 Continue`: a body announced with `Expect: 100-continue` is coming. */
  continued: boolean;
}

/** The one symbol: the request's record, on Node's request object. */
const EXCHANGE = Symbol('hookrelay.exchange');
type Carrying = IncomingMessage & { [EXCHANGE]?: Exchange };

/** Makes the record of a request that just arrived (server.ts, first thing). */
export function openExchange(req: IncomingMessage, res: ServerResponse): Exchange {
  const ex: Exchange = {
    req,
    res,
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
  (req as Carrying)[EXCHANGE] = ex;
  return ex;
}

/** The record of a request (set for every request the listener handles). */
export function exchangeOf(req: IncomingMessage): Exchange {
  return (req as Carrying)[EXCHANGE]!;
}

/** What the Koa app adds to its context: `ctx.exchange`, the request's record (app.ts defines it once, on `app.context`). */
export interface ExchangeContext {
  readonly exchange: Exchange;
}

/** The Koa context of the app and its handlers. */
export type HookContext = ParameterizedContext<DefaultState, ExchangeContext>;
