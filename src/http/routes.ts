import type { Context } from 'koa';
import { HookError } from '../errors.js';
import type { Action } from '../engine/action.js';
import type { Engine } from '../engine/engine.js';
import { templateHeaders, templateQuery, templateUrl } from '../engine/context.js';
import { RUN_STATUSES, type RunRecord, type RunStatus, type Store } from '../store/store.js';
import type { Accepted } from '../dispatch/runtime.js';
import type { Route, RouteKind } from './routes-table.js';
import { sendJson } from './json.js';
import { EVENTS_LIMIT, RUNS_LIMIT } from './limits.js';

/** What the routes need: the mapping step, the dispatcher and the store's read side. */
export interface RouteDeps {
  hooksPath: string;
  acceptStatus: number;
  engine: Pick<Engine, 'map' | 'wake' | 'agent' | 'fanOut'>;
  dispatch(actions: Action[]): Promise<Accepted[]>;
  store: Pick<Store, 'getRun' | 'listEvents' | 'listRuns'>;
  now?: () => Date;
  /** Logs what a mapping dropped past hooks.maxFanOut. */
  onDropped?: (mappingId: string, dropped: number) => void;
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
 * answers 404 for it before Koa.
 */
export function handlers(deps: RouteDeps): Record<Exclude<RouteKind, 'none'>, Handler> {
  const now = deps.now ?? (() => new Date());
  return {
    async wake(ctx) {
      const action = deps.engine.wake(ctx.state.body);
      const [done] = await deps.dispatch([action]);
      ok(ctx, 200, { eventId: idOf(done), mode: action.mode });
    },

    async agent(ctx) {
      const action = deps.engine.agent(ctx.state.body);
      const [done] = await deps.dispatch([action]);
      ok(ctx, deps.acceptStatus, { runId: idOf(done), sessionKey: action.sessionKey });
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
      const result = await deps.engine.map({
        name,
        payload: ctx.state.body,
        headers: templateHeaders(ctx.req.headers),
        query: templateQuery(route.query),
        url: templateUrl(route.path, route.query),
        now: now(),
      });
      if (result.type === 'no_match') throw new HookError('no_mapping', `no mapping matches POST ${deps.hooksPath}/${name} with this payload`);
      if (result.type === 'skipped') {
        ctx.status = 204;
        return;
      }
      if (result.dropped) deps.onDropped?.(result.mappingId, result.dropped);
      const accepted = await deps.dispatch(result.actions);
      const anyAgent = accepted.some((a) => a.action === 'agent');
      const status = anyAgent ? deps.acceptStatus : 200;
      if (!deps.engine.fanOut(result.mappingId)) {
        ok(ctx, status, { ...accepted[0] });
        return;
      }
      ok(ctx, status, { ...accepted[0], actions: accepted });
    },

    health(ctx) {
      sendJson(ctx, 200, { ok: true });
    },
  };
}

function ok(ctx: Context, status: number, body: Record<string, unknown>): void {
  sendJson(ctx, status, { ok: true, ...body });
}

function idOf(a: Accepted): string {
  return a.action === 'wake' ? a.eventId : a.runId;
}

/**
 * The run as the contract shows it: no message text, no delivery internals — of its outbox
 * row only `delivery: {status, target, attempts, error?}` (CONTRACT.md §9).
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
