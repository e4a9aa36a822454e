import type { Action, AgentAction, WakeAction } from '../action.js';
import type { MappingConfig } from '../config/types.js';
import { HookError } from '../errors.js';
import { bodyKey, checkSameRequest, headerKey, itemsOf, requestKey, type Item, type KeptAnswer, type KeyLookup, type RequestKey } from './request-keys.js';
import type { MappingAnswer } from '../mapping-answer.js';
import { requestHeaders, templateQuery, templateUrl } from './context.js';
import type { MatchRequest, WhenFailure } from './engine.js';
import type { CompiledMapping, HookRequest, MapResult } from './compile-mapping.js';
import type { Found } from './match.js';
import type { Explanation } from '../match-explanation.js';
import type { Payload } from '../transform-types.js';

/** The send routes of CONTRACT.md §5 that decide() takes. */
export type SendRoute = 'wake' | 'agent' | 'mapped';

/** One request as decide() takes it: no sockets, no Koa; the listener, `hookrelay test` and the console's dry run make it. */
export interface DecideRequest {
  route: SendRoute;
  /** The NAME of `{hooks.path}/NAME` (mapped hooks). */
  name: string;
  method: 'GET' | 'POST';
  /** The normalised path the request was routed on. */
  path: string;
  /** The query without `?` and without credentials (credentials.ts withoutCredentialParams). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body's bytes as read (decoded): what a signature and an idempotency key guard. */
  body: Uint8Array;
  /** Parses the body; called once its signature is decided (a bad signature is the answer, not a bad body). */
  payload: () => Payload | Promise<Payload>;
  who: Who;
  now: Date;
}

/** Who is asking, as the credential check found (CONTRACT.md §4). */
export interface Who {
  /** A scoped hooks token's routes (`wake`, `agent`, mapping ids); undefined: every one. */
  routes?: ReadonlySet<string>;
  /** Let through without the token: a signature must stand in for it (`auth: signature`). */
  bySignature?: boolean;
  /** A console replay: a new request, so it neither holds nor replays an idempotency key (CONTRACT.md §11). */
  replay?: boolean;
}

/** The mappings whose `verify` passed on the body, and the header of the message id the signature covered. */
export interface Signed {
  signedBy: ReadonlySet<string>;
  signedKey?: string;
  /** A sender's handshake, answered with no action (CONTRACT.md §12, §15): its mapping and its answer. */
  handshake?: { mappingId: string; answer: MappingAnswer };
}

/**
 * What decide() may ask outside the engine: the answers kept for keys, and the body's signature
 * check (absent: not asked), which may read the payload for a sender's handshake.
 */
export interface DecidePorts {
  keys?: KeyLookup;
  verify?: (body: Uint8Array, payload: () => Promise<unknown>) => Signed | undefined | Promise<Signed | undefined>;
  /** Explain a matched request too (`hookrelay test --explain`); one nothing matched is always explained. */
  explain?: boolean;
}

/** The usual answer of an accept and, for a mapping with `response`, its own (CONTRACT.md §12). */
export interface Rendered {
  status: number;
  body: string;
  own?: MappingAnswer;
}

/** The `?wait` of `/agent` (CONTRACT.md §14). */
export interface AgentWait {
  ms: number;
  /** OpenClaw's `waitForCompletion`: the answer carries `completion`. */
  completion: boolean;
}

interface Common {
  /** The mapping the decision is about, once one is known (the request's route label). */
  mappingId?: string;
  /** `match.when` expressions that threw on the way (counted as not matching). */
  failures?: WhenFailure[];
  /** Every mapping on the path and its verdict: when nothing matched, or when asked ({@link DecidePorts.explain}). */
  explanation?: Explanation;
}

/** Where a refusal arose: a dry run says it so (dry-run.ts). */
export type Stage = 'signature' | 'payload' | 'map';

/** The one decision on a request (STYLE.md #3). */
export type Decision = Common & (
  | { type: 'refused'; stage: Stage; error: unknown }
  /** `explanation`: every mapping on the path and why it did not match (the request log keeps it). */
  | { type: 'no_match'; error: HookError; explanation: Explanation }
  /** A fixed answer, nothing acted on: a mapping's own (`action: respond`), a sender's handshake, or 204 (nothing to do). */
  | { type: 'respond'; status: number; own?: MappingAnswer }
  /** A repeat: answered with the first answer its key kept. */
  | { type: 'replay'; stored: KeptAnswer }
  | Act
);

/** Actions to accept, and how. */
export interface Act {
  type: 'act';
  actions: Action[];
  /** The request's idempotency key, not yet kept. */
  key?: RequestKey;
  /** forEach with an `idempotencyKey` template: each action's own key (CONTRACT.md §8). */
  items?: Item[];
  fanOut: boolean;
  /** The mapping's `ratePerMinute` (CONTRACT.md §14). */
  rate?: number;
  wait?: AgentWait;
  /** forEach items past `hooks.maxFanOut`, not acted on. */
  dropped?: number;
  /** The answer of what was accepted (every item's entry under forEach, replayed ones included). */
  answer(accepted: readonly Record<string, unknown>[]): Promise<Rendered>;
}

/** What decide() needs of the engine. */
export interface Core {
  /** A direct `/wake` or `/agent` body's action; throws HookError. */
  wake(body: unknown): WakeAction;
  agent(body: unknown): AgentAction;
  match(req: MatchRequest, admitted?: (mappingId: string) => boolean): Promise<Found>;
  map(req: HookRequest, mapping: CompiledMapping): Promise<MapResult>;
  /** Why no mapping took a request: only asked once nothing matched. */
  explain(req: MatchRequest): Promise<Explanation>;
}

/** An accept's status: `hooks.acceptStatus` when an agent run is among what was accepted, else 200 (CONTRACT.md §5). */
export function acceptedStatus(accepted: readonly Record<string, unknown>[], acceptStatus: number): number {
  return accepted.some((a) => a.action === 'agent') ? acceptStatus : 200;
}

/** The longest `?wait=S` (CONTRACT.md §14). */
const MAX_WAIT_SECONDS = 60;
const NONE_SIGNED: ReadonlySet<string> = new Set();

/** The engine's one call per request, in the order of CONTRACT.md §8 and §12: a repeat is answered before anything is rendered. */
export function decider(core: Core, hooks: { acceptStatus: number; maxWaitSeconds: number; mappings: readonly MappingConfig[] }) {
  const verifying = new Map(hooks.mappings.filter((m) => m.verify && m.match.path !== undefined).map((m) => [m.id, m.auth === 'signature']));
  const rates = new Map(hooks.mappings.flatMap((m) => (m.ratePerMinute === undefined ? [] : [[m.id, m.ratePerMinute] as const])));

  return async function decide(req: DecideRequest, ports: DecidePorts = {}): Promise<Decision> {
    let stage: Stage = 'signature';
    const at: Common = {};
    try {
      let parsed: Promise<Payload> | undefined;
      const payload = () => (parsed ??= Promise.resolve().then(req.payload));
      const signed = await ports.verify?.(req.body, payload);
      if (signed?.handshake) return { type: 'respond', mappingId: signed.handshake.mappingId, status: signed.handshake.answer.status, own: signed.handshake.answer };
      stage = 'payload';
      const body = await payload();
      stage = 'map';
      const keyed = ports.keys !== undefined && req.who.replay !== true;
      const lookup = async (key: RequestKey) => {
        const [stored] = await ports.keys!([key.key]);
        if (stored) checkSameRequest(stored, key, 'idempotency key');
        return stored && { type: 'replay' as const, stored, ...at };
      };
      if (req.route !== 'mapped') {
        // An array is a payload on mapped hooks only: parsePayload refuses it here (CONTRACT.md §15).
        const direct = body as Record<string, unknown>;
        const wait = req.route === 'agent' ? agentWait(req.query, direct, hooks.maxWaitSeconds) : undefined;
        const header = keyed ? headerKey(req.headers, signed?.signedKey) : undefined;
        const key = header !== undefined ? requestKey(req.route, header, req.body) : keyed && req.route === 'agent' ? bodyKey(direct, req.body) : undefined;
        const repeat = key && (await lookup(key));
        if (repeat) return repeat;
        if (req.route === 'wake') {
          const action = core.wake(direct);
          return { type: 'act', actions: [action], key, fanOut: false, answer: async ([a]) => ({ status: 200, body: JSON.stringify({ ok: true, eventId: a!.eventId, mode: action.mode }) }) };
        }
        const action = core.agent(direct);
        return { type: 'act', actions: [action], key, wait, fanOut: false, answer: async ([a]) => ({ status: hooks.acceptStatus, body: JSON.stringify({ ok: true, runId: a!.runId, sessionKey: action.sessionKey }) }) };
      }
      const query = templateQuery(req.query);
      const { headers, withheld } = requestHeaders(req.headers);
      const hook: HookRequest = {
        name: req.name,
        method: req.method,
        // A GET's payload is its query, the token removed (CONTRACT.md §12).
        payload: req.method === 'GET' ? { ...query } : body,
        headers,
        withheld,
        query,
        url: templateUrl(req.path, req.query),
        now: req.now,
      };
      // A header key is checked first, whatever matches.
      const header = keyed ? headerKey(req.headers, signed?.signedKey) : undefined;
      const who = req.who;
      const admit = (id: string) => admission(who, signed, verifying, id);
      // Only a scoped token or a signed request can be refused a mapping.
      const screened = who.routes !== undefined || signed !== undefined || who.bySignature === true;
      const { mapping, failures, refused } = await core.match(hook, screened ? (id) => admit(id) === undefined : undefined);
      if (failures) at.failures = failures;
      // Not for a refused one: its `when` never runs on a payload it was not admitted with.
      if (ports.explain || (!mapping && !refused)) at.explanation = await core.explain(hook);
      if (!mapping && refused) {
        at.mappingId = refused.id;
        return { type: 'refused', stage: 'signature', error: admit(refused.id), ...at };
      }
      if (!mapping) return { type: 'no_match', error: noMapping(req, at.explanation!.mappings), ...at, explanation: at.explanation! };
      const mappingId = (at.mappingId = mapping.id);
      // A header key is looked up before mapping; a mapping that renders its own key uses that
      // one, known only once rendered. A respond mapping acts on nothing and keeps no key.
      let key: RequestKey | undefined;
      if (header !== undefined && !mapping.keyed && !mapping.respond) {
        key = requestKey(`mapping:${mappingId}`, header, req.body);
        const repeat = await lookup(key);
        if (repeat) return repeat;
      }
      const result = await core.map(hook, mapping);
      if (result === undefined) return { type: 'respond', status: 204, ...at };
      if ('answer' in result) return { type: 'respond', status: result.answer.status, own: result.answer, ...at };
      const { actions } = result;
      const fanOut = mapping.forEach !== undefined;
      const render = mapping.response;
      const act: Act & Common = {
        type: 'act',
        actions,
        fanOut,
        rate: rates.get(mappingId),
        async answer(accepted) {
          const usual = { status: acceptedStatus(accepted, hooks.acceptStatus), body: JSON.stringify(fanOut ? { ok: true, ...accepted[0], actions: accepted } : { ok: true, ...accepted[0] }) };
          return render ? { own: await render(hook, hook.now.toISOString(), accepted, usual), ...usual } : usual;
        },
        ...at,
      };
      if (result.dropped) act.dropped = result.dropped;
      if (fanOut && who.replay !== true && actions.some((a) => a.idempotency)) {
        act.items = await itemsOf(actions, `mapping:${mappingId}`, req.body, ports.keys);
        return act;
      }
      const rendered = actions[0]!.idempotency;
      if (rendered && keyed) {
        key = requestKey(`mapping:${mappingId}`, rendered.key, req.body);
        const repeat = await lookup(key);
        if (repeat) return repeat;
      }
      if (key) act.key = key;
      return act;
    } catch (error) {
      return { type: 'refused', stage, error, ...at };
    }
  };
}

/** Admission to a mapping, before its `match.when` (CONTRACT.md §4, §12): undefined when admitted, else the refusal. */
function admission(who: Who, signed: Signed | undefined, verifying: ReadonlyMap<string, boolean>, id: string): HookError | undefined {
  if (who.routes !== undefined && !who.routes.has(id)) {
    return new HookError('forbidden', `this hooks token does not reach mapping "${id}": add it to the token's routes (hooks.tokens[].routes) or send with another token`);
  }
  if (signed === undefined && who.bySignature !== true) return undefined;
  const standsIn = verifying.get(id);
  if (who.bySignature && standsIn !== true) {
    return new HookError('unauthorized', `this payload matched mapping "${id}", which does not take a signature in place of the token: send the hooks token`);
  }
  if (standsIn !== undefined && !(signed?.signedBy ?? NONE_SIGNED).has(id)) {
    return new HookError('invalid_signature', `this payload matched mapping "${id}", whose own verify does not pass: sign the request with its verify.secret`);
  }
  return undefined;
}

/** Says how many mappings the path has and no more: the sender is not told the config (CONTRACT.md §16). */
function noMapping(req: DecideRequest, count: number): HookError {
  const mappings = count === 0 ? 'no mapping takes this path' : count === 1 ? 'the one mapping on this path did not match' : `none of the ${count} mappings on this path matched`;
  return new HookError('no_mapping', `no mapping matches ${req.method} ${req.path} with this payload: ${mappings}`);
}

/** `?wait=S`, or OpenClaw's `"waitForCompletion": true`, up to `hooks.maxWaitSeconds` (CONTRACT.md §14, docs/callbacks.md). */
function agentWait(query: string, payload: Record<string, unknown>, maxWaitSeconds: number): AgentWait | undefined {
  const given = new URLSearchParams(query).get('wait');
  const completion = payload.waitForCompletion === true;
  if (given === null) return completion ? { ms: maxWaitSeconds * 1000, completion } : undefined;
  const s = given.trim() === '' ? NaN : Number(given);
  if (!Number.isFinite(s) || s <= 0 || s > MAX_WAIT_SECONDS) {
    throw new HookError('invalid_payload', `wait must be a number of seconds greater than 0 and at most ${MAX_WAIT_SECONDS} (e.g. ?wait=30)`);
  }
  return { ms: Math.round(s * 1000), completion };
}

export type { KeptAnswer };
