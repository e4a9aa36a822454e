import { HookError } from '../errors.js';
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../store/records.js';
import { answer, answerJson } from './answer.js';
import { EVENTS_LIMIT, EVENTS_MAX_BYTES, RUNS_LIMIT } from './limits.js';
import { literal, type AppRouter, type RoutedContext } from './router.js';
import type { RouteDeps } from './routes.js';

/** The admin reads of CONTRACT.md §5, which the gate let through only with the admin token. */
export function readRoutes(router: AppRouter, deps: Pick<RouteDeps, 'hooksPath' | 'store' | 'metrics'>): void {
  const base = literal(deps.hooksPath);
  router.get(`${base}/events`, (ctx) => events(deps, ctx));
  router.get(`${base}/runs`, (ctx) => runs(deps, ctx));
  router.get(`${base}/runs/:id`, (ctx) => run(deps, ctx));
  const metrics = deps.metrics;
  if (metrics) router.get('/metrics', async (ctx) => answer(ctx.exchange, 200, { 'content-type': metrics.contentType }, await metrics.render()));
}

async function events(deps: Pick<RouteDeps, 'store'>, ctx: RoutedContext): Promise<void> {
  const params = new URLSearchParams(ctx.exchange.route!.query);
  const after = intParam(params.get('after'), 'after', 0, 0);
  const limit = intParam(params.get('limit'), 'limit', EVENTS_LIMIT.default, 1, EVENTS_LIMIT.max);
  const events = await deps.store.listEvents(after, limit, EVENTS_MAX_BYTES);
  answerJson(ctx.exchange, 200, { ok: true, events: events.map((e) => ({ seq: e.seq, id: e.id, kind: e.kind, text: e.text, source: e.source, at: e.at })) });
}

async function runs(deps: Pick<RouteDeps, 'store'>, ctx: RoutedContext): Promise<void> {
  const params = new URLSearchParams(ctx.exchange.route!.query);
  const limit = intParam(params.get('limit'), 'limit', RUNS_LIMIT.default, 1, RUNS_LIMIT.max);
  const status = params.get('status') || undefined;
  if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) {
    throw new HookError('invalid_payload', `status: must be one of ${RUN_STATUSES.join(', ')}`);
  }
  const before = params.get('before') || undefined;
  if (before !== undefined && !(await deps.store.getRun(before))) {
    throw new HookError('invalid_payload', `before: no run with id ${JSON.stringify(before.slice(0, 64))} (page on with the runId of a listed run)`);
  }
  const list = await deps.store.listRuns({ limit, status: status as RunStatus | undefined, before });
  answerJson(ctx.exchange, 200, { ok: true, runs: list.map(publicRun) });
}

async function run(deps: Pick<RouteDeps, 'store'>, ctx: RoutedContext): Promise<void> {
  // From the gate's decoded name, not the router's param (which would decode a second time).
  const id = ctx.exchange.route!.name.slice('runs/'.length);
  const found = await deps.store.getRun(id);
  if (!found) throw new HookError('not_found', `no run with id ${JSON.stringify(id.slice(0, 64))}`);
  answerJson(ctx.exchange, 200, { ok: true, run: publicRun(found) });
}

/** The run as the contract shows it (CONTRACT.md §9, docs/callbacks.md): no message text, delivery internals or callback URL. */
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
    callback: run.callback,
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
