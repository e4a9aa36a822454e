import { HookError } from '../errors.js';
import type { HookRequest } from '../engine/mapping-step.js';
import type { Engine, WhenFailure } from '../engine/engine.js';
import type { Accepted } from '../action.js';
import { requestHeaders, templateQuery, templateUrl } from '../engine/context.js';
import type { Store } from '../store/store.js';
import type { Metrics } from '../metrics.js';
import { act, actItems, keyOf, okAnswer, replayed, statusOf, withOwn, type AcceptDeps, type OwnAnswer } from './accept.js';
import { answerMapping } from './mapping-answer.js';
import { answer } from './answer.js';
import type { Exchange } from './exchange.js';
import { checkIdempotencyKey } from '../idempotency-key.js';
import { headerKey, requestKey, type RequestKey } from './idempotency.js';
import { mappingLabel } from './route-label.js';
import type { Signatures } from './signatures.js';
import type { Handshakes } from './handshake.js';
import { agentWait, waitedAnswer } from './wait.js';

/** What the routes need: the mapping step, the dispatcher and the store's read side. */
export interface RouteDeps extends AcceptDeps {
  hooksPath: string;
  engine: Pick<Engine, 'map' | 'match' | 'wake' | 'agent' | 'fanOut' | 'response' | 'methods'>;
  store: Pick<Store, 'getRun' | 'listEvents' | 'listRuns' | 'findKeys' | 'takeRate' | 'returnRate'>;
  /** Mapping id → its `ratePerMinute`, for the mappings that set one; absent: none does (flow control, CONTRACT.md §14). */
  rates?: ReadonlyMap<string, number>;
  /** The mappings' signature checks (body.ts runs them on the raw body; `mapped` admits the match). */
  signatures: Pick<Signatures, 'check' | 'refusal'>;
  now?: () => Date;
  /** Logs what a mapping dropped past hooks.maxFanOut. */
  onDropped?: (mappingId: string, dropped: number) => void;
  /** Slack's url_verification (handshake.ts); absent: none is answered. */
  handshakes?: Pick<Handshakes, 'answerSlack'>;
  /** Logs a `match.when` that threw (counted as not matching). */
  onWhenFailed?: (failure: WhenFailure) => void;
  /** `GET /metrics` (absent: `server.metrics: false`, and the gate does not route it). */
  metrics?: Pick<Metrics, 'render' | 'contentType' | 'request' | 'rateLimited'>;
}

/** A send route's handler; the route is the gate's decision on the record, never re-derived. */
export type SendHandler = (ex: Exchange) => Promise<void>;

/**
 * The send routes of CONTRACT.md §5, one handler per route kind: `wake`, `agent` and a mapped
 * hook. They are the hot path, picked by the gate's route kind (app.ts) without a router; each
 * reads the payload from the request's record, builds its actions and goes through the accept
 * flow (accept.ts). The read routes are reads.ts's; `console` is the console's.
 */
export function sendHandlers(deps: RouteDeps): Record<'wake' | 'agent' | 'mapped', SendHandler> {
  const now = deps.now ?? (() => new Date());
  return {
    wake: (ex) => wake(deps, ex),
    agent: (ex) => agent(deps, ex),
    mapped: (ex) => mapped(deps, ex, now()),
  };
}

async function wake(deps: RouteDeps, ex: Exchange): Promise<void> {
  const key = keyOf(ex, 'wake');
  if (key && (await replayed(deps, ex, key))) return;
  const action = deps.engine.wake(ex.payload);
  await act(deps, ex, [action], key, ([done]) => okAnswer(200, { ok: true, eventId: idOf(done!), mode: action.mode }));
}

async function agent(deps: RouteDeps, ex: Exchange): Promise<void> {
  const wait = agentWait(ex, deps.maxWaitSeconds);
  const key = keyOf(ex, 'agent') ?? bodyKey(ex);
  if (key && (await replayed(deps, ex, key))) return;
  const action = deps.engine.agent(ex.payload);
  await act(deps, ex, [action], key, ([done]) => okAnswer(deps.acceptStatus, { ok: true, runId: idOf(done!), sessionKey: action.sessionKey }),
    wait && (([done]) => waitedAnswer(deps.dispatch, wait, done!)));
}

/**
 * `POST {path}/NAME` (or `GET`, for a mapping that takes it): matched once (`engine.match`),
 * among the mappings it is admitted to ({@link refusal}: a `match.when` runs only for those,
 * CONTRACT.md §12), its header key looked up on the match, then mapped
 * (`engine.map(req, matched)`, which does not match again) and accepted — or, for an
 * `action: respond` mapping, answered as it says, with nothing acted on.
 */
async function mapped(deps: RouteDeps, ex: Exchange, now: Date): Promise<void> {
  // A handshake is answered whatever the mappings' conditions, and is no action (CONTRACT.md §8).
  if (deps.handshakes?.answerSlack(ex)) return;
  const route = ex.route!;
  // The gate let only GET and POST through to a mapped hook, each to a name that takes it.
  const method = ex.req.method === 'GET' ? 'GET' : 'POST';
  const query = templateQuery(route.query);
  const req: HookRequest = {
    name: route.name,
    method,
    // A GET's payload is its query, the token removed (CONTRACT.md §12).
    payload: method === 'GET' ? { ...query } : ex.payload!,
    ...requestHeaders(ex.req.headers),
    query,
    url: templateUrl(route.path, route.query),
    now,
  };
  // A header key is checked first, whatever matches; a console replay has none.
  const replay = ex.replayOf !== undefined;
  const header = replay ? undefined : headerKey(ex);
  // Only a scoped token or a signed request can be refused a mapping (refusal() admits any other).
  const screened = ex.sender?.routes !== undefined || ex.signedBy || ex.bySignature;
  const match = deps.engine.match(req, screened ? (id) => refusal(deps, ex, id) === undefined : undefined);
  const { matched, failures, refused } = match instanceof Promise ? await match : match;
  if (failures) failures.forEach((f) => deps.onWhenFailed?.(f));
  // From here on the request is labelled with its mapping, a refusal and a mapping's 400 or
  // 500 included (logs and metrics). Where a mapping exists that the request is not admitted
  // to and none it is admitted to matched, the answer is that refusal (403 or 401), not 404.
  if (refused !== undefined) {
    ex.label = mappingLabel(refused);
    throw refusal(deps, ex, refused)!;
  }
  if (!matched) throw noMapping(deps, route.name, method);
  ex.label = mappingLabel(matched.mappingId);
  // A header key is looked up before mapping; a mapping that renders its own key
  // (idempotencyKey) uses that one instead, known only once rendered. A respond mapping acts
  // on nothing, so no key is looked up or kept: a repeat is answered the same way anew.
  let key: RequestKey | undefined;
  if (header !== undefined && !matched.keyed && !matched.respond) {
    key = requestKey(`mapping:${matched.mappingId}`, header, ex.raw!);
    if (await replayed(deps, ex, key)) return;
  }
  const result = await deps.engine.map(req, matched);
  if (result.type === 'no_match') throw noMapping(deps, route.name);
  if (result.type === 'skipped') {
    answer(ex, 204, {});
    return;
  }
  if (result.type === 'respond') return answerMapping(ex, result.answer);
  if (result.dropped) deps.onDropped?.(result.mappingId, result.dropped);
  const { actions, mappingId } = result;
  const fanOut = deps.engine.fanOut(mappingId);
  const rate = deps.rates?.get(mappingId);
  const own = ownAnswer(deps, mappingId, req);
  if (fanOut && !replay && actions.some((a) => a.idempotency)) {
    const none = await actItems(deps, ex, `mapping:${mappingId}`, actions, own, rate === undefined ? undefined : () => limitRate(deps, mappingId, rate));
    if (none && rate !== undefined) await returnRate(deps, mappingId);
    return;
  }
  const rendered = replay ? undefined : actions[0]!.idempotency;
  if (rendered) {
    key = requestKey(`mapping:${mappingId}`, rendered.key, ex.raw!);
    if (await replayed(deps, ex, key)) return;
  }
  if (rate !== undefined) await limitRate(deps, mappingId, rate);
  const none = await act(deps, ex, actions, key, (accepted) => {
    const usual = okAnswer(statusOf(deps, accepted), fanOut ? { ok: true, ...accepted[0], actions: accepted } : { ok: true, ...accepted[0] });
    return own ? withOwn(usual, accepted, own) : usual;
  });
  if (none && rate !== undefined) await returnRate(deps, mappingId);
}

/** The mapping's `response`, as the accept flow asks for it; undefined when it has none. */
function ownAnswer(deps: RouteDeps, mappingId: string, req: HookRequest): OwnAnswer | undefined {
  const render = deps.engine.response(mappingId);
  return render && ((usual, accepted) => render(req, accepted, usual));
}

const NONE_SIGNED: ReadonlySet<string> = new Set();

/**
 * An `/agent` body's own `idempotencyKey` (CONTRACT.md §8): current OpenClaw clients send it
 * there (openclaw/openclaw src/gateway/hooks.ts `resolveHookIdempotencyKey`); a header key
 * comes first. Checked like a header key; a console replay has none.
 */
function bodyKey(ex: Exchange): RequestKey | undefined {
  const given = ex.payload?.idempotencyKey;
  if (given === undefined || given === null || ex.replayOf !== undefined) return undefined;
  if (typeof given !== 'string') throw new HookError('invalid_payload', 'idempotencyKey must be a string');
  const key = checkIdempotencyKey(given.trim(), 'idempotencyKey');
  return key === undefined ? undefined : requestKey('agent', key, ex.raw!);
}

/**
 * A mapping's `ratePerMinute` (CONTRACT.md §14): the request is counted in the mapping's sliding
 * 60 s window, or refused with 429 and `Retry-After` in whole seconds. Checked last before the
 * commit — after validation and the idempotent replays — so that refused, invalid and replayed
 * requests never count.
 */
async function limitRate(deps: RouteDeps, mappingId: string, perMinute: number): Promise<void> {
  const waitMs = await deps.store.takeRate(`mapping:${mappingId}`, perMinute);
  if (waitMs === 0) return;
  deps.metrics?.rateLimited(mappingId);
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  throw new HookError('rate_limited', `mapping "${mappingId}" takes at most ${perMinute} requests a minute (ratePerMinute); retry in ${seconds} s`, { 'retry-after': String(seconds) });
}

/**
 * Gives back the place {@link limitRate} took for a request that acted on nothing: a concurrent
 * request with its key committed first, and this one was answered as its replay — which the
 * window does not count. Its answer is already written: a store that cannot take the return
 * leaves the place counted until it slides out of the window, as if this were a new request.
 */
async function returnRate(deps: RouteDeps, mappingId: string): Promise<void> {
  await deps.store.returnRate(`mapping:${mappingId}`).catch(() => undefined);
}

function idOf(a: Accepted): string {
  return a.action === 'wake' ? a.eventId : a.runId;
}

function noMapping(deps: RouteDeps, name: string, method = 'POST'): HookError {
  return new HookError('no_mapping', `no mapping matches ${method} ${deps.hooksPath}/${name} with this payload`);
}

/**
 * Admission to a mapping, checked on each candidate before its `match.when` is evaluated and
 * before anything is rendered or answered for it (a replay of its key's first answer
 * included): a scoped hooks token must reach the mapping (CONTRACT.md §4: a valid credential,
 * so 403); a signed request's signature must have been made for it (signatures.ts). Undefined
 * when admitted; else the refusal.
 */
function refusal(deps: RouteDeps, ex: Exchange, mappingId: string): HookError | undefined {
  const reach = ex.sender?.routes;
  if (reach !== undefined && !reach.has(mappingId)) {
    return new HookError('forbidden', `this hooks token does not reach mapping "${mappingId}": add it to the token's routes (hooks.tokens[].routes) or send with another token`);
  }
  // Let through by signature, a request must have been signed for its mapping: one without a
  // signature for its method (signatures.ts) is refused here too.
  if (ex.signedBy || ex.bySignature) return deps.signatures.refusal(ex, ex.signedBy ?? NONE_SIGNED, mappingId);
  return undefined;
}
