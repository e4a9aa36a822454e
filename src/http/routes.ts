import Router from '@koa/router';
import type { Context } from 'koa';
import { HookError } from '../errors.js';
import type { Action } from '../engine/action.js';
import type { Engine } from '../engine/engine.js';
import { templateHeaders, templateQuery } from '../engine/context.js';
import type { Store, RunRecord } from '../store/store.js';
import type { Accepted } from '../dispatch/runtime.js';
import { hookRoute } from './gate.js';
import { sendJson } from './json.js';

/** What the routes need: the mapping step, the dispatcher and the store's read side. */
export interface RouteDeps {
  hooksPath: string;
  acceptStatus: number;
  engine: Pick<Engine, 'map' | 'wake' | 'agent' | 'fanOut'>;
  dispatch(actions: Action[]): Promise<Accepted[]>;
  store: Pick<Store, 'getRun' | 'listEvents'>;
  now?: () => Date;
  /** Logs what a mapping dropped past hooks.maxFanOut. */
  onDropped?: (mappingId: string, dropped: number) => void;
}

const EVENTS_MAX = 1000;

/** The hooks endpoints of CONTRACT.md §5, under `hooks.path`. */
export function hooksRouter(deps: RouteDeps): Router {
  const router = new Router({ prefix: deps.hooksPath });
  const now = deps.now ?? (() => new Date());

  router.post('/wake', async (ctx) => {
    const action = deps.engine.wake(ctx.state.body);
    const [done] = await deps.dispatch([action]);
    ok(ctx, 200, { eventId: idOf(done), mode: action.mode });
  });

  router.post('/agent', async (ctx) => {
    const action = deps.engine.agent(ctx.state.body);
    const [done] = await deps.dispatch([action]);
    ok(ctx, deps.acceptStatus, { runId: idOf(done), sessionKey: action.sessionKey });
  });

  router.get('/events', async (ctx) => {
    const after = intParam(ctx.query.after, 'after', 0, 0);
    const limit = intParam(ctx.query.limit, 'limit', 100, 1, EVENTS_MAX);
    const events = await deps.store.listEvents(after, limit);
    ok(ctx, 200, { events: events.map((e) => ({ seq: e.seq, id: e.id, kind: e.kind, text: e.text, source: e.source, at: e.at })) });
  });

  router.get('/runs/:id', async (ctx) => {
    const run = await deps.store.getRun(ctx.params.id);
    if (!run) throw new HookError('not_found', `no run with id ${JSON.stringify(ctx.params.id.slice(0, 64))}`);
    ok(ctx, 200, { run: publicRun(run) });
  });

  router.post('/{*name}', async (ctx) => {
    const route = hookRoute(ctx.req);
    const name = route?.name ?? '';
    const result = await deps.engine.map({
      name,
      payload: ctx.state.body,
      headers: templateHeaders(ctx.req.headers),
      query: templateQuery(route?.query ? new URLSearchParams(route.query) : []),
      url: ctx.url,
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
  });

  return router;
}

function ok(ctx: Context, status: number, body: Record<string, unknown>): void {
  sendJson(ctx, status, { ok: true, ...body });
}

function idOf(a: Accepted): string {
  return a.action === 'wake' ? a.eventId : a.runId;
}

/** The run as the contract shows it: no message text, no delivery internals. */
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
    deliveredTo: run.deliveredTo,
  };
}

function intParam(v: string | string[] | undefined, name: string, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (v === undefined || v === '') return dflt;
  const n = Number(Array.isArray(v) ? v[0] : v);
  if (!Number.isInteger(n) || n < min) throw new HookError('invalid_payload', `${name}: must be an integer ≥ ${min}`);
  return Math.min(n, max);
}
