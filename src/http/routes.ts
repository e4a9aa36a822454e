import type { Accepted } from '../action.js';
import type { KeyClaim, Runtime } from '../dispatch/runtime.js';
import { isHeartbeatOk } from '../dispatch/main-session.js';
import type { Engine, WhenFailure } from '../engine/engine.js';
import { acceptedStatus, type Act, type AgentWait, type Decision, type DecidePorts, type SendRoute } from '../engine/decide.js';
import { checkSameRequest, type RequestKey } from '../engine/request-keys.js';
import { HookError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { ENDED_STATUSES, type RunRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import { answer, answerJson } from './answer.js';
import { payloadOf } from './body.js';
import type { BodyLimits } from './body-limits.js';
import type { Exchange, HookContext } from './exchange.js';
import { answerMapping, answerReplay, markReplayed, storedMappingAnswer } from './mapping-answer.js';
import { publicRun } from './reads.js';
import { requestRow } from './request-log.js';
import { mappingLabel } from './routes-table.js';
import type { Signatures } from './signatures.js';

/** What the send routes need: the engine, the dispatcher and the store (actions, keys and the request's row go in one commit). */
export interface RouteDeps {
  hooksPath: string;
  acceptStatus: number;
  engine: Pick<Engine, 'decide' | 'methods'>;
  dispatch: Pick<Runtime, 'prepare' | 'commit' | 'waitRun'>;
  store: Pick<Store, 'findKeys' | 'takeRate' | 'returnRate' | 'getRun' | 'listEvents' | 'listRuns'>;
  signatures: Pick<Signatures, 'check'>;
  onDropped?: (mappingId: string, dropped: number) => void;
  onWhenFailed?: (failure: WhenFailure) => void;
  /** `GET /metrics` (absent: `server.metrics: false`, and the gate does not route it). */
  metrics?: Pick<Metrics, 'render' | 'contentType' | 'request' | 'rateLimited'>;
  /** The client address of a request (client-address.ts): the failure budget of a signature that stands in for the token. */
  clientAddress: (req: Exchange['req']) => string;
}

const EMPTY = Buffer.alloc(0);

/** The send routes of CONTRACT.md §5: the request becomes the engine's, its one decision (engine/decide.ts) the answer. */
export function sendHandler(deps: RouteDeps, bodyLimit: BodyLimits): (ctx: HookContext) => Promise<void> {
  const keys: DecidePorts['keys'] = (hashes) => deps.store.findKeys(hashes);
  return async function send(ctx) {
    const ex = ctx.exchange;
    const route = ex.route!;
    const { req } = ex;
    const mapped = route.kind === 'mapped';
    // The gate let only GET (HEAD for a handshake GET) and POST through to a mapped hook, and POST to the others.
    const method = req.method === 'GET' || req.method === 'HEAD' ? 'GET' : 'POST';
    const bySignature = ex.bySignature;
    const verify: DecidePorts['verify'] = mapped
      ? (body, payload) => deps.signatures.check({
        name: route.name, method, path: route.path, target: req.url ?? route.path, headers: req.headers, bySignature, routes: ex.sender?.routes, address: () => deps.clientAddress(req),
      }, body, payload)
      : undefined;
    const decision = await deps.engine.decide({
      route: route.kind as SendRoute,
      name: route.name,
      method,
      path: route.path,
      query: route.query,
      headers: req.headers,
      body: ex.raw ?? EMPTY,
      payload: () => payloadOf(ex, bodyLimit(route).bytes),
      who: { routes: ex.sender?.routes, bySignature, replay: ex.replayOf !== undefined },
      now: new Date(),
    }, { keys, verify });
    return answerDecision(deps, ex, decision);
  };
}

/** A decision as the answer: what it refused is thrown to the error step (error-handler.ts). */
async function answerDecision(deps: RouteDeps, ex: Exchange, d: Decision): Promise<void> {
  if (d.failures) {
    ex.failures = [...(ex.failures ?? []), ...d.failures];
    d.failures.forEach((f) => deps.onWhenFailed?.(f));
  }
  // From here on the request is labelled with its mapping, a refusal and a 400 or 500 included.
  if (d.mappingId !== undefined) ex.label = mappingLabel(d.mappingId);
  switch (d.type) {
    case 'no_match':
      ex.explanation = d.explanation;
      throw d.error;
    case 'refused':
      throw d.error;
    case 'replay':
      return answerReplay(ex, d.stored);
    case 'respond':
      if (d.own) return answerMapping(ex, d.own);
      return answer(ex, d.status, {});
    case 'act':
      if (d.dropped) deps.onDropped?.(d.mappingId!, d.dropped);
      return accept(deps, ex, d, d.mappingId);
  }
}

/** Accepts what the decision says, `mappingId` being its mapping (for the rate window). */
export async function accept(deps: RouteDeps, ex: Exchange, d: Act, mappingId: string | undefined): Promise<void> {
  const rate = d.rate === undefined ? undefined : () => limitRate(deps, mappingId!, d.rate!);
  const none = d.items ? await acceptItems(deps, ex, d, rate) : await acceptAll(deps, ex, d, rate);
  if (none && rate) await deps.store.returnRate(`mapping:${mappingId}`).catch(() => undefined);
}

const statusOf = (deps: RouteDeps, accepted: readonly Record<string, unknown>[]) => acceptedStatus(accepted, deps.acceptStatus);

/** Commits every action under the request's key and answers; true when a concurrent request's commit held the key. */
async function acceptAll(deps: RouteDeps, ex: Exchange, d: Act, beforeCommit?: () => Promise<void>): Promise<boolean> {
  await beforeCommit?.();
  const prepared = deps.dispatch.prepare(d.actions);
  const made = await d.answer(prepared.accepted);
  const own = made.own;
  const status = own ? own.status : made.status;
  const body = own ? storedMappingAnswer(own) : made.body;
  const claims = d.key && [{ actions: d.actions.map((_, i) => i), status, body, ...d.key }];
  const held = await deps.dispatch.commit(prepared, claims, requestRow(ex, status, prepared.accepted));
  if (held.length === 0) {
    ex.committed = true;
    const later = d.wait && (await waitedAnswer(deps.dispatch, d.wait, prepared.accepted[0]!));
    if (later) answerJson(ex, later.status, later.body);
    else if (own) answerMapping(ex, own);
    else answerJson(ex, status, body);
    return false;
  }
  // Held: the store left the row out; it is logged as the replay it is answered as.
  if (!d.key || !(await replayed(deps, ex, d.key))) throw new HookError('unavailable', 'the idempotency key was held but could not be read back');
  return true;
}

async function replayed(deps: RouteDeps, ex: Exchange, key: RequestKey): Promise<boolean> {
  const [stored] = await deps.store.findKeys([key.key]);
  if (!stored) return false;
  checkSameRequest(stored, key, 'idempotency key');
  answerReplay(ex, stored);
  return true;
}

/** forEach with an `idempotencyKey` (CONTRACT.md §8): new items committed under their own keys, the answer lists all; true when concurrent requests took every new key. */
async function acceptItems(deps: RouteDeps, ex: Exchange, d: Act, beforeCommit?: () => Promise<void>): Promise<boolean> {
  const { actions } = d;
  const items = d.items!;
  const answers: Record<string, unknown>[] = items.map((it) => it.replayed!);
  const todo = actions.flatMap((_, i) => (items[i]!.replayed ? [] : [i]));
  let actedOnNothing = false;
  if (todo.length > 0) {
    await beforeCommit?.();
    const prepared = deps.dispatch.prepare(todo.map((i) => actions[i]!));
    const { accepted } = prepared;
    const claims: KeyClaim[] = [];
    const claimed: number[] = [];
    todo.forEach((i, j) => {
      answers[i] = accepted[j]!;
      const key = items[i]!.key;
      if (!key) return;
      claimed.push(i);
      claims.push({ actions: [j], status: statusOf(deps, [accepted[j]!]), body: JSON.stringify(accepted[j]), ...key });
    });
    // The row's status is the whole answer's: the items replayed and those acted on now.
    const held = await deps.dispatch.commit(prepared, claims, requestRow(ex, statusOf(deps, answers), accepted));
    if (held.length === 0) ex.committed = true;
    if (held.length > 0 && !(await readBack(deps, held.map((c) => claimed[c]!), items, answers))) {
      throw new HookError('unavailable', 'an idempotency key was held but could not be read back');
    }
    actedOnNothing = held.length === todo.length;
  }
  // Only a batch that acted on nothing new is a replay as a whole.
  if (answers.every((a) => a.replayed === true)) markReplayed(ex);
  // A mapping's `response` is made from the whole list, so that a retried batch gets the first answer (CONTRACT.md §8, §12).
  const made = await d.answer(answers);
  if (made.own) answerMapping(ex, made.own);
  else answerJson(ex, made.status, made.body);
  return actedOnNothing;
}

async function readBack(deps: RouteDeps, indexes: number[], items: Act['items'] & object, answers: Record<string, unknown>[]): Promise<boolean> {
  const stored = await deps.store.findKeys(indexes.map((i) => items[i]!.key!.key));
  return indexes.every((i, j) => {
    const s = stored[j];
    if (!s) return false;
    checkSameRequest(s, items[i]!.key!, `actions[${i}].idempotencyKey`);
    answers[i] = { ...(JSON.parse(s.body) as Record<string, unknown>), replayed: true };
    return true;
  });
}

/** A mapping's `ratePerMinute` (CONTRACT.md §14): taken last before the commit, so refused and replayed requests never count. */
async function limitRate(deps: RouteDeps, mappingId: string, perMinute: number): Promise<void> {
  const waitMs = await deps.store.takeRate(`mapping:${mappingId}`, perMinute);
  if (waitMs === 0) return;
  deps.metrics?.rateLimited(mappingId);
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  throw new HookError('rate_limited', `mapping "${mappingId}" takes at most ${perMinute} requests a minute (ratePerMinute); retry in ${seconds} s`, { 'retry-after': String(seconds) });
}

/** The 200 of a waited `agent` call once its run ended (CONTRACT.md §14); undefined when it did not in time. */
async function waitedAnswer(dispatch: Pick<Runtime, 'waitRun'>, wait: AgentWait, accepted: Accepted): Promise<{ status: number; body: string } | undefined> {
  if (accepted.action !== 'agent') return undefined;
  const run = await dispatch.waitRun(accepted.runId, wait.ms, wait.completion ? completed : ended);
  if (!run) return undefined;
  const body: Record<string, unknown> = { ok: true, runId: run.runId, sessionKey: run.sessionKey, run: publicRun(run) };
  if (wait.completion) body.completion = completionOf(run);
  return { status: 200, body: JSON.stringify(body) };
}

/** OpenClaw's `completion` of a waited `/hooks/agent` call (CONTRACT.md §14; openclaw src/gateway/hooks.types.ts): bounded facts only. */
interface Completion {
  status: 'ok' | 'error' | 'skipped';
  replyDisposition: 'visible' | 'silent' | 'empty';
  delivered?: boolean;
  deliveryAttempted?: boolean;
  deliveryError?: 'delivery-failed';
}

/** The completion of an ended run whose delivery (if any) has settled. */
function completionOf(run: RunRecord): Completion {
  const reply = run.reply?.trim() ?? '';
  const completion: Completion = {
    status: run.status === 'succeeded' ? 'ok' : 'error',
    replyDisposition: reply === '' || isHeartbeatOk(reply) ? 'empty' : 'visible',
  };
  // Forward mode: the upstream delivers, and hookrelay does not know whether it did.
  if (run.forwarded !== undefined || run.errorCode === 'forward_failed') return completion;
  const d = run.delivery;
  completion.delivered = d?.status === 'delivered';
  completion.deliveryAttempted = d !== undefined;
  if (d?.status === 'failed' || (run.deliver && run.errorCode === 'no_recipient')) completion.deliveryError = 'delivery-failed';
  return completion;
}

/** True once a run has ended and its reply's delivery, if any, has settled: what waitForCompletion waits for. */
function completed(run: RunRecord): boolean {
  return ended(run) && run.delivery?.status !== 'pending';
}

function ended(run: RunRecord): boolean {
  return ENDED_STATUSES.includes(run.status);
}
