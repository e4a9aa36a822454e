import { HookError } from './errors.js';
import type { Action } from './action.js';
import type { Engine } from './engine/engine.js';
import { templateHeaders, templateQuery, templateUrl, withoutToken } from './engine/context.js';
import { createRouting } from './http/routes-table.js';
import { parseTarget } from './request-target.js';
import { parsePayload } from './http/payload.js';

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
 * body cannot be read; `message` is `code: message`), `no_mapping`, `map` (a HookError of the
 * mapping step, whose `cause` a mapping's author may want to see).
 */
export class DryRunProblem extends Error {
  constructor(readonly stage: 'name' | 'payload' | 'no_mapping' | 'map', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DryRunProblem';
  }
}

/**
 * Resolves `POST {hooksPath}/NAME` through the engine's own `map()` and returns the result in
 * the shape `hookrelay test` prints (`{mapping, …action}`, `{mapping, actions}` under forEach,
 * `{mapping, skipped: true}`); dispatches nothing. NAME is routed like the path of a real
 * request and the body parsed by the listener's own parser, so that a dry run resolves to
 * what `serve` would. Throws {@link DryRunProblem}; any other error is a bug.
 */
export async function dryRun(engine: Pick<Engine, 'map' | 'fanOut'>, hooksPath: string, req: DryRunRequest): Promise<Record<string, unknown>> {
  const target = parseTarget(`${hooksPath}/${req.name}`);
  const route = target && createRouting(hooksPath, true)(target);
  if (route?.kind !== 'mapped') {
    throw new DryRunProblem('name', route?.hooks && route.kind !== 'none'
      ? `${route.name} is a built-in endpoint (${hooksPath}/${route.name}), not a mapping: give the NAME of a mapping's match.path`
      : `${JSON.stringify(req.name)} is not a hook name: give the NAME in POST ${hooksPath}/NAME`);
  }
  let payload: Record<string, unknown>;
  try {
    payload = parsePayload(req.body, req.headers['content-type'], true);
  } catch (e) {
    if (e instanceof HookError) throw new DryRunProblem('payload', `${e.code}: ${e.message}`);
    throw e;
  }
  const query = withoutToken(req.query);
  let result;
  try {
    result = await engine.map({
      name: route.name,
      payload,
      headers: templateHeaders(req.headers),
      query: templateQuery(query),
      url: templateUrl(route.path, query),
      now: req.now,
    });
  } catch (e) {
    if (e instanceof HookError) throw new DryRunProblem('map', `${e.code}: ${e.message}`, { cause: e.cause });
    throw e;
  }
  if (result.type === 'no_match') throw new DryRunProblem('no_mapping', `no mapping matches POST ${hooksPath}/${route.name} with this payload`);
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
