import { HookError } from './errors.js';
import type { Action } from './action.js';
import type { Engine } from './engine/engine.js';
import type { DecideRequest, Decision, Rendered, Stage } from './engine/decide.js';
import type { MappingAnswer } from './mapping-answer.js';
import { withoutCredentialParams } from './credentials.js';
import { createRouting } from './http/routes-table.js';
import { parseTarget } from './request-target.js';
import { parsePayload } from './http/payload.js';
import { BODYLESS_STATUSES } from './config/answer-rules.js';
import type { Signatures } from './http/signatures.js';
import type { Explanation } from './match-explanation.js';
import { causeText, type MappingFailure } from './failure.js';

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
  /** Also explain a request a mapping took (`test --explain`): the result's `explanation`. */
  explain?: boolean;
}

/** Why a dry run gave no action, with what the listener would answer (`status`, `code`). */
export class DryRunProblem extends Error {
  readonly status: number;
  readonly code: string;
  /** Every mapping on the path and why it did not match, when none did. */
  explanation?: Explanation;
  /** A template, `match.when` or transform that failed (`transform_failed`), without payload data; `cause` is what it threw. */
  readonly failure?: MappingFailure;
  constructor(
    readonly stage: 'name' | 'method' | 'payload' | 'signature' | 'no_mapping' | 'map',
    message: string,
    options?: { cause?: unknown; status?: number; code?: string; explanation?: Explanation; failure?: MappingFailure },
  ) {
    super(message, options);
    this.name = 'DryRunProblem';
    this.status = options?.status ?? 404;
    this.code = options?.code ?? 'no_mapping';
    if (options?.explanation) this.explanation = options.explanation;
    if (options?.failure) this.failure = options.failure;
  }
}

/**
 * Resolves `{hooksPath}/NAME` through decide() as the listener does, in the shape `hookrelay test`
 * prints; acts on nothing. `signatures`: the listener's checks of the mappings' `verify`, else
 * no signature is asked for. Throws {@link DryRunProblem}.
 */
export async function dryRun(engine: Pick<Engine, 'decide' | 'methods'>, hooksPath: string, req: DryRunRequest, signatures?: Pick<Signatures, 'check' | 'takesGet'>): Promise<Record<string, unknown>> {
  const target = parseTarget(`${hooksPath}/${req.name}`);
  const route = target && createRouting(hooksPath, true)(target);
  if (route?.kind !== 'mapped') {
    throw new DryRunProblem('name', route?.hooks && route.kind !== 'none'
      ? `${route.name} is a built-in endpoint (${hooksPath}/${route.name}), not a mapping: give the NAME of a mapping's match.path`
      : `${JSON.stringify(req.name)} is not a hook name: give the NAME in POST ${hooksPath}/NAME`, { status: 404, code: 'not_found' });
  }
  const method = req.method ?? 'POST';
  const takes = engine.methods(route.name);
  // A sender's handshake GET (Meta's, Dropbox's) comes to its POST mapping's path, as the gate lets it.
  if (!takes[method] && !(method === 'GET' && signatures?.takesGet(route.name))) {
    throw new DryRunProblem('method', `${method} is not allowed on ${hooksPath}/${route.name}; its mappings take ${takes.allow}`, { status: 405, code: 'method_not_allowed' });
  }
  const d = await engine.decide(decideRequest(route.name, route.path, method, req), { ...(signatures ? {
    verify: (raw, payload) => signatures.check({ name: route.name, method, path: route.path, target: targetOf(route.path, req.query), headers: req.headers, bySignature: false, address: () => 'dry-run' }, raw, payload),
  } : {}), ...(req.explain ? { explain: true } : {}) });
  const warnings = d.failures?.map((f) => `mapping "${f.mappingId}": match.when failed (${causeText(f)}); counted as not matching`);
  const out = await outcome(d, warnings).catch((e: unknown) => {
    // A matched request the mapping then refused is explained too, when asked.
    if (e instanceof DryRunProblem && d.explanation) e.explanation ??= d.explanation;
    throw e;
  });
  if (warnings) out.warnings = warnings;
  if (req.explain && d.explanation) out.explanation = d.explanation;
  return out;
}

/** The request target a dry run stands for: the path and the query as given (a signed URL covers the token too). */
export function targetOf(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}

/** A mapped hook's request as the listener gives it to decide(): the query without credentials, the payload parsed on demand. */
export function decideRequest(name: string, path: string, method: 'GET' | 'POST', req: Omit<DryRunRequest, 'name' | 'method'>): DecideRequest {
  const { body, headers } = req;
  const payload = () => (method === 'GET' ? {} : parsePayload(body, headers['content-type'], true));
  return { route: 'mapped', name, method, path, query: withoutCredentialParams(req.query), headers, body, payload, who: {}, now: req.now };
}

/** The printed result of a decision, with the status the listener would answer. */
async function outcome(d: Decision, warnings: string[] | undefined): Promise<Record<string, unknown>> {
  const mapping = d.mappingId;
  switch (d.type) {
    case 'refused':
      return problemOf(d.stage, d.error);
    case 'no_match':
      throw new DryRunProblem('no_mapping', `${d.error.message}${warnings ? ` (${warnings.join('; ')})` : ''}`, { explanation: d.explanation });
    case 'replay':
      throw new Error('a dry run reads no idempotency key');
    case 'respond':
      if (d.own) return { mapping, status: d.status, response: shown(d.own) };
      return { mapping, status: 204, skipped: true };
    case 'act': {
      const { actions, fanOut } = d;
      // Stand-ins for the ids a real accept draws: a dry run accepts nothing.
      const accepted = actions.map((a) => (a.kind === 'wake' ? { action: 'wake', eventId: '<eventId>' } : { action: 'agent', runId: '<runId>', sessionKey: a.sessionKey }));
      let made: Rendered;
      try {
        made = await d.answer(accepted);
      } catch (e) {
        return problemOf('map', e);
      }
      const out: Record<string, unknown> = fanOut
        ? { mapping, status: made.status, actions: actions.map(requestBody), ...(d.dropped ? { dropped: d.dropped } : {}) }
        : { mapping, status: made.status, ...requestBody(actions[0]!) };
      if (made.own) {
        out.status = made.own.status;
        out.response = shown(made.own);
      }
      return out;
    }
  }
}

/** A mapping's answer as printed: its status, and its content type and body when it has a body. */
function shown(a: MappingAnswer): Record<string, unknown> {
  const bodiless = a.body === undefined || BODYLESS_STATUSES.has(a.status);
  return { status: a.status, ...(bodiless ? {} : { contentType: a.contentType, body: a.body }), ...(a.headers ? { headers: a.headers } : {}) };
}

/** An action as the body of the direct request that would do the same. */
function requestBody(action: Action): Record<string, unknown> {
  if (action.kind === 'wake') return { action: 'wake', text: action.text, mode: action.mode };
  // The idempotency key is not a body field (it would travel as a header).
  const { kind: _kind, source: _source, unsafe: _unsafe, idempotency: _key, sessionKeyGiven: _given, ...body } = action;
  return { action: 'agent', ...body };
}

/** A HookError as the {@link DryRunProblem} of `stage`, with the listener's status and code; anything else is a bug. */
function problemOf(stage: Stage, e: unknown): never {
  if (!(e instanceof HookError)) throw e;
  const message = stage === 'signature' ? e.message : `${e.code}: ${e.message}`;
  throw new DryRunProblem(stage, message, { ...(stage === 'map' ? { cause: e.cause, failure: e.failure } : {}), status: e.status, code: e.code });
}
