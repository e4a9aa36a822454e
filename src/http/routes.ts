import type { Context } from 'koa';
import { HookError } from '../errors.js';
import type { Action } from '../action.js';
import type { Engine } from '../engine/engine.js';
import { templateHeaders, templateQuery, templateUrl } from '../engine/context.js';
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { Accepted, Dispatched, KeyClaim } from '../dispatch/runtime.js';
import { checkSameRequest, headerKey, requestKey, sendReplay, type RequestKey } from './idempotency.js';
import type { Route, RouteKind } from './routes-table.js';
import { noteMapping } from './route-label.js';
import { noteCommitted, replayOf, requestRow } from './request-log.js';
import type { NewRequestLog } from '../store/records.js';
import type { Metrics } from '../metrics.js';
import { sendJson } from './json.js';
import { EVENTS_LIMIT, RUNS_LIMIT } from './limits.js';
import type { SignedBy, Signatures } from './signatures.js';

/** What the routes need: the mapping step, the dispatcher and the store's read side. */
export interface RouteDeps {
  hooksPath: string;
  acceptStatus: number;
  engine: Pick<Engine, 'map' | 'match' | 'wake' | 'agent' | 'fanOut'>;
  /**
   * Commits the actions, with their idempotency keys when given (`Runtime.dispatchKeyed`), and
   * the request's row of the request log (`request`, made from what was accepted) in the same commit.
   */
  dispatch(actions: Action[], claims?: KeyClaim[], request?: (accepted: Accepted[]) => NewRequestLog | undefined): Promise<Dispatched>;
  store: Pick<Store, 'getRun' | 'listEvents' | 'listRuns' | 'findKeys'>;
  /** The mappings' signature checks (body.ts runs them on the raw body; `mapped` admits the match). */
  signatures: Pick<Signatures, 'check' | 'admit'>;
  now?: () => Date;
  /** Logs what a mapping dropped past hooks.maxFanOut. */
  onDropped?: (mappingId: string, dropped: number) => void;
  /** `GET /metrics` (absent: `server.metrics: false`, and the gate does not route it). */
  metrics?: Pick<Metrics, 'render' | 'contentType' | 'request'>;
}

/** A route's handler: the route is the gate's decision (routes-table.ts), never re-derived. */
export type Handler = (ctx: Context, route: Route) => Promise<void> | void;

/**
 * An answer of `/events` carries at most about this many bytes of event text (and always at
 * least one event): `limit` alone let one request over large events build a 100 MB answer.
 * The client pages on with `after`, as it does past `limit`.
 */
export const EVENTS_MAX_BYTES = 1024 * 1024;

/**
 * The endpoints of CONTRACT.md §5, one handler per route kind. `none` has no handler: the gate
 * answers 404 for it before Koa; `console` is the console's (console/console.ts).
 */
export function handlers(deps: RouteDeps): Record<Exclude<RouteKind, 'none' | 'console'>, Handler> {
  const now = deps.now ?? (() => new Date());

  /**
   * A request's key, looked up at once: true when the stored answer was replayed. Callers
   * without a key do not call it (an await per request for nothing).
   */
  async function replayed(ctx: Context, key: RequestKey): Promise<boolean> {
    const [stored] = await deps.store.findKeys([key.key]);
    if (!stored) return false;
    checkSameRequest(stored, key, 'idempotency key');
    sendReplay(ctx, stored);
    return true;
  }

  /**
   * Commits the actions (with the request's key, when it has one) and answers `answer(accepted)`;
   * when a concurrent request with the same key committed first, answers its answer instead.
   * The request log's row goes into the same commit (store.ts accept), made from the answer.
   */
  async function act(ctx: Context, actions: Action[], key: RequestKey | undefined, answer: (accepted: Accepted[]) => Answer): Promise<void> {
    const made = once(answer);
    const claims = key && [{ ...key, actions: actions.map((_, i) => i), answer: made }];
    const { accepted, held } = await deps.dispatch(actions, claims, rowOf(ctx, made));
    if (held.length === 0) {
      noteCommitted(ctx.res);
      const { status, body } = made(accepted);
      sendJson(ctx, status, body);
      return;
    }
    // Held: the store left the row out; it is logged as the replay it is answered as.
    if (!key || !(await replayed(ctx, key))) throw new HookError('unavailable', 'the idempotency key was held but could not be read back');
  }

  /**
   * The request's header key scoped to `route`, over the body bytes; undefined without one —
   * and for a console replay, which is a new request: it must not be answered as a repeat of
   * the one it replays, nor hold a key (README "Console").
   */
  function keyOf(ctx: Context, route: string): RequestKey | undefined {
    if (replayOf(ctx.res) !== undefined) return undefined;
    const header = headerKey(ctx.req.headers);
    return header === undefined ? undefined : requestKey(route, header, ctx.state.raw);
  }

  function statusOf(accepted: readonly Accepted[]): number {
    return accepted.some((a) => a.action === 'agent') ? deps.acceptStatus : 200;
  }

  /**
   * forEach with an `idempotencyKey` template (CONTRACT.md §8): each item's key is checked on
   * its own, so a retried batch acts only on the items not acted on yet; the answer lists every
   * item's action, those acted on before with their first ids and `replayed: true`. Every key is
   * looked up first (one indexed read each); a key taken meanwhile by a concurrent request
   * (held at commit) is read back after it.
   */
  async function actItems(ctx: Context, route: string, actions: Action[]): Promise<void> {
    const keys = actions.map((a) => a.idempotency && requestKey(route, a.idempotency.key, a.idempotency.item ?? ctx.state.raw));
    const answers: Record<string, unknown>[] = new Array(actions.length);
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
    if (todo.length > 0) {
      const claims: KeyClaim[] = [];
      const claimed: number[] = [];
      todo.forEach((i, j) => {
        if (!keys[i]) return;
        claimed.push(i);
        claims.push({ ...keys[i], actions: [j], answer: ([a]) => ({ status: statusOf([a!]), body: JSON.stringify(a) }) });
      });
      const row = (accepted: Accepted[]) => {
        const all = answers.slice();
        todo.forEach((i, j) => (all[i] = accepted[j]!));
        return requestRow(ctx.res, statusOf(all.map((a) => a as Accepted)), accepted);
      };
      const { accepted, held } = await deps.dispatch(todo.map((i) => actions[i]!), claims, row);
      if (held.length === 0) noteCommitted(ctx.res);
      todo.forEach((i, j) => (answers[i] = accepted[j]!));
      if (held.length > 0 && (await replay(held.map((c) => claimed[c]!))).length > 0) {
        throw new HookError('unavailable', 'an idempotency key was held but could not be read back');
      }
    }
    // Only a batch that acted on nothing new is a replay as a whole.
    if (answers.every((a) => a.replayed === true)) ctx.set('Idempotent-Replayed', 'true');
    const listed = answers.map((a) => a as Accepted);
    ok(ctx, statusOf(listed), { ...answers[0], actions: answers });
  }

  return {
    async wake(ctx) {
      const key = keyOf(ctx, 'wake');
      if (key && (await replayed(ctx, key))) return;
      const action = deps.engine.wake(ctx.state.body);
      await act(ctx, [action], key, ([done]) => okAnswer(200, { ok: true, eventId: idOf(done!), mode: action.mode }));
    },

    async agent(ctx) {
      const key = keyOf(ctx, 'agent');
      if (key && (await replayed(ctx, key))) return;
      const action = deps.engine.agent(ctx.state.body);
      await act(ctx, [action], key, ([done]) => okAnswer(deps.acceptStatus, { ok: true, runId: idOf(done!), sessionKey: action.sessionKey }));
    },

    async events(ctx, route) {
      const params = new URLSearchParams(route.query);
      const after = intParam(params.get('after'), 'after', 0, 0);
      const limit = intParam(params.get('limit'), 'limit', EVENTS_LIMIT.default, 1, EVENTS_LIMIT.max);
      const events = await deps.store.listEvents(after, limit, EVENTS_MAX_BYTES);
      ok(ctx, 200, { events: events.map((e) => ({ seq: e.seq, id: e.id, kind: e.kind, text: e.text, source: e.source, at: e.at })) });
    },

    async runs(ctx, route) {
      const params = new URLSearchParams(route.query);
      const limit = intParam(params.get('limit'), 'limit', RUNS_LIMIT.default, 1, RUNS_LIMIT.max);
      const status = params.get('status') || undefined;
      if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) {
        throw new HookError('invalid_payload', `status: must be one of ${RUN_STATUSES.join(', ')}`);
      }
      const before = params.get('before') || undefined;
      if (before !== undefined && !(await deps.store.getRun(before))) {
        throw new HookError('invalid_payload', `before: no run with id ${JSON.stringify(before.slice(0, 64))} (page on with the runId of a listed run)`);
      }
      const runs = await deps.store.listRuns({ limit, status: status as RunStatus | undefined, before });
      ok(ctx, 200, { runs: runs.map(publicRun) });
    },

    async run(ctx, route) {
      const id = route.name.slice('runs/'.length);
      const run = await deps.store.getRun(id);
      if (!run) throw new HookError('not_found', `no run with id ${JSON.stringify(id.slice(0, 64))}`);
      ok(ctx, 200, { run: publicRun(run) });
    },

    async mapped(ctx, route) {
      const name = route.name;
      const signedBy: SignedBy | undefined = ctx.state.signedBy;
      const req = {
        name,
        payload: ctx.state.body,
        headers: templateHeaders(ctx.req.headers),
        query: templateQuery(route.query),
        url: templateUrl(route.path, route.query),
        now: now(),
        admit: admitter(ctx, route, signedBy, deps.signatures),
      };
      // A header key is looked up before mapping; a mapping that renders its own key
      // (idempotencyKey) uses that one instead, known only once rendered.
      const replay = replayOf(ctx.res) !== undefined;
      const header = replay ? undefined : headerKey(ctx.req.headers);
      let key: RequestKey | undefined;
      if (header !== undefined) {
        const target = deps.engine.match(req);
        if (target && !target.keyed) {
          // The match must pass its signature check before anything is answered for it, a
          // replay included (the same check map() makes).
          req.admit?.(target.mappingId);
          key = requestKey(`mapping:${target.mappingId}`, header, ctx.state.raw);
          if (await replayed(ctx, key)) return;
        }
      }
      const result = await deps.engine.map(req);
      if (result.type === 'no_match') throw new HookError('no_mapping', `no mapping matches POST ${deps.hooksPath}/${name} with this payload`);
      if (result.type === 'skipped') {
        ctx.status = 204;
        return;
      }
      if (result.dropped) deps.onDropped?.(result.mappingId, result.dropped);
      const { actions, mappingId } = result;
      const fanOut = deps.engine.fanOut(mappingId);
      if (fanOut && !replay && actions.some((a) => a.idempotency)) {
        await actItems(ctx, `mapping:${mappingId}`, actions);
        return;
      }
      const rendered = replay ? undefined : actions[0]!.idempotency;
      if (rendered) {
        key = requestKey(`mapping:${mappingId}`, rendered.key, ctx.state.raw);
        if (await replayed(ctx, key)) return;
      }
      await act(ctx, actions, key, (accepted) =>
        okAnswer(statusOf(accepted), fanOut ? { ok: true, ...accepted[0], actions: accepted } : { ok: true, ...accepted[0] }));
    },

    health(ctx) {
      sendJson(ctx, 200, { ok: true });
    },

    async metrics(ctx) {
      const text = await deps.metrics!.render();
      ctx.status = 200;
      ctx.set('content-type', deps.metrics!.contentType);
      ctx.body = text;
    },
  };
}

/** An answer as it is sent and as an idempotency key keeps it. */
interface Answer {
  status: number;
  body: string;
}

/*
 * Per-request callbacks are made by these module-level functions and returned, never assigned
 * to a name: tsx compiles with esbuild's keepNames, which gives every named function expression
 * an Object.defineProperty(fn, 'name') where it is made — per request, on the hot path.
 */

/** `answer`, called once: later calls return the first answer (what a key keeps is what was sent). */
function once(answer: (accepted: Accepted[]) => Answer): (accepted: Accepted[]) => Answer {
  let first: Answer | undefined;
  return (accepted) => (first ??= answer(accepted));
}

/**
 * What the engine calls on a match, before rendering: the request is labelled with its mapping
 * from there on, a mapping's 400 or 500 included (logs and metrics), and a signed request's
 * signature must have been made for that mapping (signatures.ts).
 */
function admitter(ctx: Context, route: Route, signedBy: SignedBy | undefined, signatures: Pick<Signatures, 'admit'>): (mappingId: string) => void {
  return (mappingId) => {
    noteMapping(ctx.res, mappingId);
    // A scoped hooks token (CONTRACT.md §4) reaches only its routes: a valid credential, so 403.
    if (route.scope !== undefined && !route.scope.has(mappingId)) {
      throw new HookError('forbidden', `this hooks token does not reach mapping "${mappingId}": add it to the token's routes (hooks.tokens[].routes) or send with another token`);
    }
    if (signedBy) signatures.admit(route, signedBy, mappingId);
  };
}

/** The request log's row of an accept, made from its answer (the status it is sent with). */
function rowOf(ctx: Context, made: (accepted: Accepted[]) => Answer): (accepted: Accepted[]) => NewRequestLog | undefined {
  return (accepted) => requestRow(ctx.res, made(accepted).status, accepted);
}

/** `body` with its `ok: true` first (built by the caller: a spread into a new object costs more than the stringify). */
function okAnswer(status: number, body: { ok: true } & Record<string, unknown>): Answer {
  return { status, body: JSON.stringify(body) };
}

function ok(ctx: Context, status: number, body: Record<string, unknown>): void {
  sendJson(ctx, status, { ok: true, ...body });
}

function idOf(a: Accepted): string {
  return a.action === 'wake' ? a.eventId : a.runId;
}

/**
 * The run as the contract shows it: no message text, no delivery internals — of its outbox
 * row only `delivery: {status, target, attempts, error?}`, and in forward mode the upstream's
 * answer `forwarded: {status, upstreamRunId?}` (CONTRACT.md §9).
 */
export function publicRun(run: RunRecord) {
  return {
    runId: run.runId,
    sessionKey: run.sessionKey,
    status: run.status,
    name: run.name,
    model: run.model,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    reply: run.reply,
    error: run.error,
    errorCode: run.errorCode,
    deliveredTo: run.deliveredTo,
    delivery: run.delivery,
    forwarded: run.forwarded,
  };
}

function intParam(v: string | null, name: string, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (v === null || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new HookError('invalid_payload', max === Number.MAX_SAFE_INTEGER ? `${name}: must be an integer ≥ ${min}` : `${name}: must be an integer from ${min} to ${max}`);
  }
  return n;
}
