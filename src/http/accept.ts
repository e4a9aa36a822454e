import { HookError } from '../errors.js';
import type { Action } from '../action.js';
import type { KeyClaim, Runtime } from '../dispatch/runtime.js';
import type { Accepted } from '../action.js';
import type { Store } from '../store/store.js';
import { answerJson } from './answer.js';
import type { Exchange } from './exchange.js';
import { answerReplay, checkSameRequest, headerKey, markReplayed, requestKey, type RequestKey } from './idempotency.js';
import { requestRow } from './request-log.js';
import type { MappingAnswer } from '../mapping-answer.js';
import { answerMapping, storedMappingAnswer } from './mapping-answer.js';

/**
 * The accept flow of the send routes (routes.ts): commit the actions with their idempotency
 * keys and the request log's row, then answer — or answer a repeat with its first answer.
 * One direction (STYLE.md "data flows one way"): the dispatcher draws the actions' ids
 * (`prepare`), the flow builds from them the answer, each key's first answer and the row, and
 * the dispatcher commits that data (`commit`); it never calls back into the listener.
 */
export interface AcceptDeps {
  /** `hooks.acceptStatus`: the status of an accepted agent action. */
  acceptStatus: number;
  /** `hooks.maxWaitSeconds`: the longest wait of `waitForCompletion` (http/wait.ts). */
  maxWaitSeconds: number;
  dispatch: Pick<Runtime, 'prepare' | 'commit' | 'waitRun'>;
  store: Pick<Store, 'findKeys'>;
}

/** An answer as it is sent and as an idempotency key keeps it. */
export interface Answer {
  status: number;
  body: string;
  /** A mapping's `response` (CONTRACT.md §12): sent in place of the JSON `body`, which then is what the key keeps (mapping-answer.ts). */
  own?: MappingAnswer;
}

/** Turns the usual answer of an accept into the mapping's own (`response`), given what was accepted. */
export type OwnAnswer = (usual: Answer, accepted: readonly Record<string, unknown>[]) => Promise<MappingAnswer>;

/**
 * The request's header key scoped to `route` (`wake`, `agent`), over the body bytes; undefined
 * without one — and for a console replay, which is a new request: it must not be answered as
 * a repeat of the one it replays, nor hold a key (README "Console").
 */
export function keyOf(ex: Exchange, route: string): RequestKey | undefined {
  if (ex.replayOf !== undefined) return undefined;
  const header = headerKey(ex);
  return header === undefined ? undefined : requestKey(route, header, ex.raw!);
}

/**
 * A request's key, looked up at once: true when the stored answer was replayed. Callers
 * without a key do not call it (an await per request for nothing).
 */
export async function replayed(deps: AcceptDeps, ex: Exchange, key: RequestKey): Promise<boolean> {
  const [stored] = await deps.store.findKeys([key.key]);
  if (!stored) return false;
  checkSameRequest(stored, key, 'idempotency key');
  answerReplay(ex, stored);
  return true;
}

/** An accept's status: `hooks.acceptStatus` when an agent run is among the actions, else 200. */
export function statusOf(deps: AcceptDeps, accepted: readonly Accepted[]): number {
  return accepted.some((a) => a.action === 'agent') ? deps.acceptStatus : 200;
}

/**
 * Commits the actions (with the request's key, when it has one) and answers `answerOf(accepted)`;
 * when a concurrent request with the same key committed first, answers its answer instead.
 * The request log's row goes into the same commit (Store.accept), made with the answer's status.
 * `waited` (`?wait`, waitForCompletion: http/wait.ts): after the commit, an answer to give
 * instead once the run ended; the key and the row keep the answer of the accept itself.
 * Resolves true when it acted on nothing: the concurrent request committed first, and this one
 * was answered as its replay.
 */
export async function act(
  deps: AcceptDeps, ex: Exchange, actions: Action[], key: RequestKey | undefined, answerOf: (accepted: readonly Accepted[]) => Answer | Promise<Answer>,
  waited?: (accepted: readonly Accepted[]) => Promise<Answer | undefined>,
): Promise<boolean> {
  const prepared = deps.dispatch.prepare(actions);
  let made = answerOf(prepared.accepted);
  if (made instanceof Promise) made = await made;
  const { status, body, own } = made;
  const claims = key && [{ ...key, actions: actions.map((_, i) => i), status, body }];
  const held = await deps.dispatch.commit(prepared, claims, requestRow(ex, status, prepared.accepted));
  if (held.length === 0) {
    ex.committed = true;
    const later = waited && (await waited(prepared.accepted));
    if (later) answerJson(ex, later.status, later.body);
    else if (own) answerMapping(ex, own);
    else answerJson(ex, status, body);
    return false;
  }
  // Held: the store left the row out; it is logged as the replay it is answered as.
  if (!key || !(await replayed(deps, ex, key))) throw new HookError('unavailable', 'the idempotency key was held but could not be read back');
  return true;
}

/**
 * forEach with an `idempotencyKey` template (CONTRACT.md §8): each item's key is checked on
 * its own, so a retried batch acts only on the items not acted on yet; the answer lists every
 * item's action, those acted on before with their first ids and `replayed: true`. Every key is
 * looked up first (one indexed read each); a key taken meanwhile by a concurrent request
 * (held at commit) is read back after it. `route`: `mapping:<id>`. `beforeCommit`: runs only
 * when some item is new (the mapping's ratePerMinute: a batch that is all replays is not counted).
 * Resolves true when `beforeCommit` ran but the commit acted on nothing: concurrent requests
 * took every new item's key first.
 */
export async function actItems(deps: AcceptDeps, ex: Exchange, route: string, actions: Action[], ownAnswer?: OwnAnswer, beforeCommit?: () => Promise<void>): Promise<boolean> {
  const keys = actions.map((a) => a.idempotency && requestKey(route, a.idempotency.key, a.idempotency.item ?? ex.raw!));
  const answers: Record<string, unknown>[] = new Array(actions.length);
  /** Fills in the stored answers of the keys at `indexes`; returns the indexes whose key is not stored. */
  const replay = async (indexes: number[]) => {
    const stored = await deps.store.findKeys(indexes.map((i) => keys[i]!.key));
    const missing: number[] = [];
    indexes.forEach((i, j) => {
      const s = stored[j];
      if (!s) return missing.push(i);
      checkSameRequest(s, keys[i]!, `actions[${i}].idempotencyKey`);
      answers[i] = { ...(JSON.parse(s.body) as Record<string, unknown>), replayed: true };
    });
    return missing;
  };
  const fresh = await replay(actions.flatMap((a, i) => (keys[i] ? [i] : [])));
  const todo = actions.flatMap((a, i) => (!keys[i] || fresh.includes(i) ? [i] : []));
  let actedOnNothing = false;
  if (todo.length > 0) {
    await beforeCommit?.();
    const prepared = deps.dispatch.prepare(todo.map((i) => actions[i]!));
    const { accepted } = prepared;
    const claims: KeyClaim[] = [];
    const claimed: number[] = [];
    todo.forEach((i, j) => {
      if (!keys[i]) return;
      claimed.push(i);
      claims.push({ ...keys[i], actions: [j], status: statusOf(deps, [accepted[j]!]), body: JSON.stringify(accepted[j]) });
    });
    // The row's status is the whole answer's: the items replayed and those acted on now.
    const all = answers.slice();
    todo.forEach((i, j) => (all[i] = accepted[j]!));
    const held = await deps.dispatch.commit(prepared, claims, requestRow(ex, statusOf(deps, all as Accepted[]), accepted));
    if (held.length === 0) ex.committed = true;
    todo.forEach((i, j) => (answers[i] = accepted[j]!));
    if (held.length > 0 && (await replay(held.map((c) => claimed[c]!))).length > 0) {
      throw new HookError('unavailable', 'an idempotency key was held but could not be read back');
    }
    actedOnNothing = held.length === todo.length;
  }
  // Only a batch that acted on nothing new is a replay as a whole.
  if (answers.every((a) => a.replayed === true)) markReplayed(ex);
  const usual = okAnswer(statusOf(deps, answers as Accepted[]), { ok: true, ...answers[0], actions: answers });
  // A mapping's `response` is made from the whole list, the items acted on before included,
  // so that a retried batch gets the answer of the first (CONTRACT.md §8, §12).
  if (ownAnswer) answerMapping(ex, await ownAnswer(usual, answers));
  else answerJson(ex, usual.status, usual.body);
  return actedOnNothing;
}

/**
 * The answer of an accept whose mapping has a `response`: the mapping's own, rendered from
 * what was accepted; the key keeps it in its envelope (mapping-answer.ts).
 */
export async function withOwn(usual: Answer, accepted: readonly Record<string, unknown>[], own: OwnAnswer): Promise<Answer> {
  const a = await own(usual, accepted);
  return { status: a.status, body: storedMappingAnswer(a), own: a };
}

/** `body` with its `ok: true` first (built by the caller: a spread into a new object costs more than the stringify). */
export function okAnswer(status: number, body: { ok: true } & Record<string, unknown>): Answer {
  return { status, body: JSON.stringify(body) };
}
