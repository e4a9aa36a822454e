import type { IncomingMessage } from 'node:http';
import { HookError, type ErrorCode } from './errors.js';
import type { Action } from './action.js';
import type { MappingConfig } from './config/types.js';
import type { Engine } from './engine/engine.js';
import type { HookRequest, MapResult } from './engine/mapping-step.js';
import type { MappingAnswer } from './mapping-answer.js';
import { requestHeaders, templateQuery, templateUrl } from './engine/context.js';
import { withoutCredentialParams } from './credentials.js';
import { createRouting } from './http/routes-table.js';
import { parseTarget } from './request-target.js';
import { parsePayload } from './http/payload.js';
import type { Auth } from './http/auth.js';
import type { Exchange } from './http/exchange.js';
import { createSignatures, type Signatures } from './http/signatures.js';

/** A request to resolve without acting on it: what `hookrelay test` and the console's playground send. */
export interface DryRunRequest {
  /** The NAME in `POST {hooks.path}/NAME`. */
  name: string;
  /** `GET` for a mapping that takes it (`match.method`): the payload is then the query. Default POST. */
  method?: 'GET' | 'POST';
  /** The body's bytes, read as the listener reads them (JSON, or form data by content-type); ignored for GET. */
  body: Uint8Array;
  /** Header names lower-case. */
  headers: Record<string, string>;
  /** A query string without `?` (credentials are removed here, as the gate removes them). */
  query: string;
  now: Date;
}

/** What a dry run checks and answers besides the mapping step. */
export interface DryRunOptions {
  /** `hooks.acceptStatus` (default 202): the status of an accepted agent action. */
  acceptStatus?: number;
  /**
   * The mappings' `verify` ({@link dryRunSignatures}): checked as the listener checks them, so
   * that an unsigned request for a verifying mapping is refused (`hookrelay test --fixtures`).
   * Without it, as `hookrelay test NAME` and the playground run, no signature is asked for.
   */
  signatures?: Pick<Signatures, 'check' | 'refusal'>;
}

/**
 * The listener's own signature checks (http/signatures.ts) for a dry run, built once from the
 * mappings. A dry run is a request that came with the hooks token, so the failure budget of
 * `auth: signature` (the only use of `auth`) is never asked.
 */
export function dryRunSignatures(mappings: readonly MappingConfig[]): Pick<Signatures, 'check' | 'refusal'> {
  return createSignatures(mappings, { auth: {} as Auth, clientAddress: () => 'dry-run' });
}

/**
 * Why a dry run gave no action. `stage`: `name` (NAME is not a mapped hook), `method` (no
 * mapping of NAME takes the method: 405), `payload` (the body cannot be read; `message` is
 * `code: message`), `no_mapping`, `map` (a HookError of the mapping step, whose `cause` a
 * mapping's author may want to see). `status` and `code`: what the listener would answer.
 */
export class DryRunProblem extends Error {
  constructor(
    readonly stage: 'name' | 'method' | 'payload' | 'signature' | 'no_mapping' | 'map',
    message: string,
    options?: { cause?: unknown; status?: number; code?: string },
  ) {
    super(message, options);
    this.name = 'DryRunProblem';
    this.status = options?.status ?? 404;
    this.code = options?.code ?? 'no_mapping';
  }

  readonly status: number;
  readonly code: string;
}

/** Stand-ins for the ids a real accept draws, in a dry run's `response` (it accepts nothing). */
export const DRY_RUN_IDS = { eventId: '<eventId>', runId: '<runId>' } as const;

/**
 * Resolves `POST {hooksPath}/NAME` (or GET) through the engine's own `match()` and `map()` and
 * returns the result in the shape `hookrelay test` prints: `{mapping, status, …action}`,
 * `{mapping, status, actions}` under forEach, `{mapping, status: 204, skipped: true}`, and for
 * a mapping's own answer (`action: respond`, or `response`) `response: {status, contentType,
 * body, headers}` beside them — `status` being what the listener would answer. `warnings`
 * lists the `match.when` expressions that failed on the way (counted as not matching).
 * Dispatches nothing. NAME is routed like the path of a real request and the body parsed by
 * the listener's own parser, so that a dry run resolves to what `serve` would. Throws
 * {@link DryRunProblem}; any other error is a bug.
 */
export async function dryRun(
  engine: Pick<Engine, 'map' | 'match' | 'fanOut' | 'response' | 'methods'>, hooksPath: string, req: DryRunRequest, opts: DryRunOptions = {},
): Promise<Record<string, unknown>> {
  const target = parseTarget(`${hooksPath}/${req.name}`);
  const route = target && createRouting(hooksPath, true)(target);
  if (route?.kind !== 'mapped') {
    throw new DryRunProblem('name', route?.hooks && route.kind !== 'none'
      ? `${route.name} is a built-in endpoint (${hooksPath}/${route.name}), not a mapping: give the NAME of a mapping's match.path`
      : `${JSON.stringify(req.name)} is not a hook name: give the NAME in POST ${hooksPath}/NAME`, { status: 404, code: 'not_found' });
  }
  const method = req.method ?? 'POST';
  const takes = engine.methods(route.name);
  if (!takes[method]) {
    throw new DryRunProblem('method', `${method} is not allowed on ${hooksPath}/${route.name}; its mappings take ${takes.allow}`, { status: 405, code: 'method_not_allowed' });
  }
  // The listener's order: the signature on the raw body, then the parse (http/body.ts).
  const signed = opts.signatures && signatureExchange(route, method, req.headers);
  if (signed) refused('signature', () => (signed.signedBy = opts.signatures!.check(signed, Buffer.from(req.body))));
  const query = withoutCredentialParams(req.query);
  let payload!: Record<string, unknown>;
  refused('payload', () => (payload = method === 'GET' ? templateQuery(query) : parsePayload(req.body, req.headers['content-type'], true)));
  const request: HookRequest = {
    name: route.name,
    method,
    payload,
    ...requestHeaders(req.headers),
    query: templateQuery(query),
    url: templateUrl(route.path, query),
    now: req.now,
  };
  let result;
  let warnings: string[] | undefined;
  try {
    // Matched among the mappings it is admitted to (its signature), as http/routes.ts does.
    const signedBy = signed?.signedBy;
    const refusal = (id: string) => opts.signatures!.refusal(signed!, signedBy!, id);
    const { matched, failures, refused: notAdmitted } = await engine.match(request, signedBy && ((id) => refusal(id) === undefined));
    warnings = failures?.map((f) => `mapping "${f.mappingId}": match.when failed (${f.code}: ${f.message}); counted as not matching`);
    if (notAdmitted !== undefined) refused('signature', () => { throw refusal(notAdmitted); });
    if (!matched) {
      const also = warnings ? ` (${warnings.join('; ')})` : '';
      throw new DryRunProblem('no_mapping', `no mapping matches ${method} ${hooksPath}/${route.name} with this payload${also}`);
    }
    result = await engine.map(request, matched);
  } catch (e) {
    problemOf('map', e);
  }
  const out = await outcome(engine, request, result, opts.acceptStatus ?? 202);
  if (warnings) out.warnings = warnings;
  return out;
}

/** The printed result of a map() that matched, with the status the listener would answer. */
async function outcome(engine: Pick<Engine, 'fanOut' | 'response'>, req: HookRequest, result: MapResult, acceptStatus: number): Promise<Record<string, unknown>> {
  if (result.type === 'no_match') throw new DryRunProblem('no_mapping', `no mapping matches ${req.method} ${req.name}`);
  if (result.type === 'skipped') return { mapping: result.mappingId, status: 204, skipped: true };
  if (result.type === 'respond') return { mapping: result.mappingId, status: result.answer.status, response: shown(result.answer) };
  const { actions, mappingId } = result;
  const fanOut = engine.fanOut(mappingId);
  const status = actions.some((a) => a.kind === 'agent') ? acceptStatus : 200;
  const out: Record<string, unknown> = fanOut
    ? { mapping: mappingId, status, actions: actions.map(requestBody), ...(result.dropped ? { dropped: result.dropped } : {}) }
    : { mapping: mappingId, status, ...requestBody(actions[0]!) };
  const render = engine.response(mappingId);
  if (render) {
    const accepted = actions.map((a) => (a.kind === 'wake'
      ? { action: 'wake', eventId: DRY_RUN_IDS.eventId }
      : { action: 'agent', runId: DRY_RUN_IDS.runId, sessionKey: a.sessionKey }));
    const usual = JSON.stringify(fanOut ? { ok: true, ...accepted[0], actions: accepted } : { ok: true, ...accepted[0] });
    let answer: MappingAnswer;
    try {
      answer = await render(req, accepted, { status, body: usual });
    } catch (e) {
      problemOf('map', e);
    }
    out.status = answer.status;
    out.response = shown(answer);
  }
  return out;
}

/** A mapping's answer as printed: its status, and its content type and body when it has a body. */
function shown(a: MappingAnswer): Record<string, unknown> {
  const bodiless = a.body === undefined || a.status === 204 || a.status === 205 || a.status === 304;
  return { status: a.status, ...(bodiless ? {} : { contentType: a.contentType, body: a.body }), ...(a.headers ? { headers: a.headers } : {}) };
}

/** An action as the body of the direct request that would do the same. */
function requestBody(action: Action): Record<string, unknown> {
  if (action.kind === 'wake') return { action: 'wake', text: action.text, mode: action.mode };
  // The idempotency key is not a body field (it would travel as a header).
  const { kind: _kind, source: _source, unsafe: _unsafe, idempotency: _key, sessionKeyGiven: _given, ...body } = action;
  return { action: 'agent', ...body };
}

/** Runs a check of the listener's; its HookError becomes a {@link DryRunProblem} of `stage` with its code. */
function refused(stage: 'payload' | 'signature', check: () => unknown): void {
  try {
    check();
  } catch (e) {
    problemOf(stage, e);
  }
}

/**
 * Rethrows a HookError of the listener's as the {@link DryRunProblem} of `stage`, with what the
 * listener would answer (status and code); anything else is a bug and goes on as it is. Only
 * the mapping step's `cause` is kept: it is what a mapping's author wants to see.
 */
function problemOf(stage: 'payload' | 'signature' | 'map', e: unknown): never {
  if (!(e instanceof HookError)) throw e;
  const message = stage === 'signature' ? e.message : `${e.code}: ${e.message}`;
  throw new DryRunProblem(stage, message, { ...(stage === 'map' ? { cause: e.cause } : {}), status: e.status, code: e.code });
}

/**
 * The part of a request's record that the signature checks read (signatures.ts): its headers,
 * its route, and that it came with the token. Nothing else of an Exchange is touched.
 */
function signatureExchange(route: Exchange['route'], method: string, headers: Record<string, string>): Exchange {
  return { req: { method, headers } as IncomingMessage, route, bySignature: false, signedBy: undefined, signedKey: undefined } as Exchange;
}
