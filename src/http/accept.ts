import { HookError } from '../errors.js';
import type { KeyClaim, Runtime } from '../dispatch/runtime.js';
import { acceptedStatus, type Act } from '../engine/decide.js';
import { checkSameRequest, type RequestKey } from '../engine/request-keys.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import { answerJson } from './answer.js';
import type { Exchange } from './exchange.js';
import { answerMapping, answerReplay, markReplayed, storedMappingAnswer } from './mapping-answer.js';
import { requestRow } from './request-log.js';
import { waitedAnswer } from './wait.js';

/** What accepting an `act` decision needs: the actions, their keys and the request's row go in one commit, then the answer. */
export interface AcceptDeps {
  acceptStatus: number;
  dispatch: Pick<Runtime, 'prepare' | 'commit' | 'waitRun'>;
  store: Pick<Store, 'findKeys' | 'takeRate' | 'returnRate'>;
  metrics?: Pick<Metrics, 'rateLimited'>;
}

/** Accepts what the decision says, `mappingId` being its mapping (for the rate window). */
export async function accept(deps: AcceptDeps, ex: Exchange, d: Act, mappingId: string | undefined): Promise<void> {
  const rate = d.rate === undefined ? undefined : () => limitRate(deps, mappingId!, d.rate!);
  const none = d.items ? await acceptItems(deps, ex, d, rate) : await acceptAll(deps, ex, d, rate);
  if (none && rate) await deps.store.returnRate(`mapping:${mappingId}`).catch(() => undefined);
}

const statusOf = (deps: AcceptDeps, accepted: readonly Record<string, unknown>[]) => acceptedStatus(accepted, deps.acceptStatus);

/** Commits every action under the request's key and answers; true when a concurrent request's commit held the key. */
async function acceptAll(deps: AcceptDeps, ex: Exchange, d: Act, beforeCommit?: () => Promise<void>): Promise<boolean> {
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

async function replayed(deps: AcceptDeps, ex: Exchange, key: RequestKey): Promise<boolean> {
  const [stored] = await deps.store.findKeys([key.key]);
  if (!stored) return false;
  checkSameRequest(stored, key, 'idempotency key');
  answerReplay(ex, stored);
  return true;
}

/** forEach with an `idempotencyKey` (CONTRACT.md §8): new items committed under their own keys, the answer lists all; true when concurrent requests took every new key. */
async function acceptItems(deps: AcceptDeps, ex: Exchange, d: Act, beforeCommit?: () => Promise<void>): Promise<boolean> {
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

async function readBack(deps: AcceptDeps, indexes: number[], items: Act['items'] & object, answers: Record<string, unknown>[]): Promise<boolean> {
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
async function limitRate(deps: AcceptDeps, mappingId: string, perMinute: number): Promise<void> {
  const waitMs = await deps.store.takeRate(`mapping:${mappingId}`, perMinute);
  if (waitMs === 0) return;
  deps.metrics?.rateLimited(mappingId);
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  throw new HookError('rate_limited', `mapping "${mappingId}" takes at most ${perMinute} requests a minute (ratePerMinute); retry in ${seconds} s`, { 'retry-after': String(seconds) });
}
