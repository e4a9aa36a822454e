import type { IncomingMessage } from 'node:http';
import { HookError, type ErrorCode } from './errors.js';
import type { Action } from './action.js';
import type { MappingConfig } from './config/types.js';
import type { Engine } from './engine/engine.js';
import { templateHeaders, templateQuery, templateUrl, withoutToken } from './engine/context.js';
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
  /** The body's bytes, read as the listener reads them (JSON, or form data by content-type). */
  body: Uint8Array;
  /** Header names lower-case. */
  headers: Record<string, string>;
  /** A query string without `?` (the token is removed here, as the gate removes it). */
  query: string;
  now: Date;
}

/**
 * Why a dry run gave no action. `stage`: `name` (NAME is not a mapped hook), `payload` (the
 * body cannot be read; `message` is `code: message`), `signature` (the mapping's `verify`
 * refused it; only with {@link DryRunOptions.signatures}), `no_mapping`, `map` (a HookError of
 * the mapping step, whose `cause` a mapping's author may want to see). `code`: the error code
 * the listener would answer with (none for `name`: the listener would not map it at all).
 */
export class DryRunProblem extends Error {
  readonly code: ErrorCode | undefined;

  constructor(readonly stage: 'name' | 'payload' | 'signature' | 'no_mapping' | 'map', message: string, options?: { cause?: unknown; code?: ErrorCode }) {
    super(message, options);
    this.name = 'DryRunProblem';
    this.code = options?.code;
  }
}

/** What a dry run checks besides the mapping step. */
export interface DryRunOptions {
  /**
   * The mappings' `verify` ({@link dryRunSignatures}): checked as the listener checks them, so
   * that an unsigned request for a verifying mapping is refused (`hookrelay test --fixtures`).
   * Without it, as `hookrelay test NAME` and the playground run, no signature is asked for.
   */
  signatures?: Pick<Signatures, 'check' | 'admit'>;
}

/**
 * The listener's own signature checks (http/signatures.ts) for a dry run, built once from the
 * mappings. A dry run is a request that came with the hooks token, so the failure budget of
 * `auth: signature` (the only use of `auth`) is never asked.
 */
export function dryRunSignatures(mappings: readonly MappingConfig[]): Pick<Signatures, 'check' | 'admit'> {
  return createSignatures(mappings, { auth: {} as Auth, clientAddress: () => 'dry-run' });
}

/**
 * Resolves `POST {hooksPath}/NAME` through the engine's own `map()` and returns the result in
 * the shape `hookrelay test` prints (`{mapping, …action}`, `{mapping, actions}` under forEach,
 * `{mapping, skipped: true}`); dispatches nothing. NAME is routed like the path of a real
 * request and the body parsed by the listener's own parser, so that a dry run resolves to
 * what `serve` would. Throws {@link DryRunProblem}; any other error is a bug.
 */
export async function dryRun(engine: Pick<Engine, 'map' | 'fanOut' | 'match'>, hooksPath: string, req: DryRunRequest, opts: DryRunOptions = {}): Promise<Record<string, unknown>> {
  const target = parseTarget(`${hooksPath}/${req.name}`);
  const route = target && createRouting(hooksPath, true)(target);
  if (route?.kind !== 'mapped') {
    throw new DryRunProblem('name', route?.hooks && route.kind !== 'none'
      ? `${route.name} is a built-in endpoint (${hooksPath}/${route.name}), not a mapping: give the NAME of a mapping's match.path`
      : `${JSON.stringify(req.name)} is not a hook name: give the NAME in POST ${hooksPath}/NAME`);
  }
  // The listener's order: the signature on the raw body, then the parse (http/body.ts).
  const signed = opts.signatures && signatureExchange(route, req.headers);
  if (signed) refused('signature', () => (signed.signedBy = opts.signatures!.check(signed, Buffer.from(req.body))));
  let payload!: Record<string, unknown>;
  refused('payload', () => (payload = parsePayload(req.body, req.headers['content-type'], true)));
  const query = withoutToken(req.query);
  const hookRequest = {
    name: route.name,
    payload,
    headers: templateHeaders(req.headers),
    query: templateQuery(query),
    url: templateUrl(route.path, query),
    now: req.now,
  };
  // Admitted on its match before anything is rendered, as http/routes.ts does.
  const matched = signed?.signedBy ? engine.match(hookRequest) : undefined;
  if (matched) refused('signature', () => opts.signatures!.admit(signed!, signed!.signedBy!, matched.mappingId));
  let result;
  try {
    result = await engine.map(hookRequest, matched);
  } catch (e) {
    if (e instanceof HookError) throw new DryRunProblem('map', `${e.code}: ${e.message}`, { cause: e.cause, code: e.code });
    throw e;
  }
  if (result.type === 'no_match') throw new DryRunProblem('no_mapping', `no mapping matches POST ${hooksPath}/${route.name} with this payload`, { code: 'no_mapping' });
  if (result.type === 'skipped') return { mapping: result.mappingId, skipped: true };
  return engine.fanOut(result.mappingId)
    ? { mapping: result.mappingId, actions: result.actions.map(requestBody), ...(result.dropped ? { dropped: result.dropped } : {}) }
    : { mapping: result.mappingId, ...requestBody(result.actions[0]!) };
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
    if (e instanceof HookError) throw new DryRunProblem(stage, stage === 'payload' ? `${e.code}: ${e.message}` : e.message, { code: e.code });
    throw e;
  }
}

/**
 * The part of a request's record that the signature checks read (signatures.ts): its headers,
 * its route, and that it came with the token. Nothing else of an Exchange is touched.
 */
function signatureExchange(route: Exchange['route'], headers: Record<string, string>): Exchange {
  return { req: { headers } as IncomingMessage, route, bySignature: false, signedBy: undefined, signedKey: undefined } as Exchange;
}

/**
 * The status the listener would answer a dry run's result with, until the result carries its
 * own: 204 for a skipped request, `acceptStatus` (hooks.acceptStatus) when an agent run is
 * among the actions, else 200 (http/accept.ts statusOf).
 */
export function dryRunStatus(out: Record<string, unknown>, acceptStatus: number): number {
  if (typeof out.status === 'number') return out.status;
  if (out.skipped === true) return 204;
  const actions = Array.isArray(out.actions) ? (out.actions as Record<string, unknown>[]) : [out];
  return actions.some((a) => a.action === 'agent') ? acceptStatus : 200;
}
