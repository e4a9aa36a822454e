import type { Exchange } from '../http/exchange.js';
import { RUN_STATUSES, type RunStatus } from '../store/records.js';
import { lastSeq } from './events-stream.js';
import { answerPage, eventsPage, mappingsPage, notFoundPage, redirect, runPage, runsPage } from './pages.js';
import type { PageDeps } from './routes.js';

const RUNS_PAGE = 50;
const EVENTS_PAGE = 100;

/** `/console/` and `/console/runs`: the runs, newest first, filtered by `status`, paged with `before`. */
export async function runs(deps: PageDeps, ex: Exchange): Promise<void> {
  const params = new URLSearchParams(ex.route!.query);
  const status = RUN_STATUSES.includes(params.get('status') as RunStatus) ? (params.get('status') as RunStatus) : undefined;
  const before = params.get('before') || undefined;
  const list = await deps.store.listRuns({ limit: RUNS_PAGE, status, before });
  answerPage(ex, 200, runsPage(list, status, before, RUNS_PAGE));
}

/** `/console/runs/ID`. */
export async function run(deps: PageDeps, ex: Exchange): Promise<void> {
  const id = ex.route!.name.slice('runs/'.length);
  const found = await deps.store.getRun(id);
  if (!found) answerPage(ex, 404, notFoundPage('No run with that id (it may have been purged after store.retainDays).'));
  else answerPage(ex, 200, runPage(found));
}

/** `/console/events`: the newest page of events; the page's script follows the stream (events-stream.ts). */
export async function events(deps: PageDeps, ex: Exchange): Promise<void> {
  const last = await lastSeq(deps.store);
  const list = await deps.store.listEvents(Math.max(0, last - EVENTS_PAGE), EVENTS_PAGE, 1024 * 1024);
  answerPage(ex, 200, eventsPage(list, list.length ? list[list.length - 1]!.seq : last));
}

/** `/console/mappings`: the mappings in match order (which are paused, with their pause and resume buttons), and the playground's form. */
export async function mappings(deps: PageDeps, ex: Exchange): Promise<void> {
  const paused = new Set((await deps.store.flowState()).paused);
  answerPage(ex, 200, mappingsPage(deps.mappings, deps.hooksPath, paused));
}

/** POST `/console/pause/ID` and `/console/resume/ID` (CONTRACT.md §14): the write of `hookrelay pause`/`resume`, then back to the mappings. */
export async function pauseMapping(deps: PageDeps, ex: Exchange): Promise<void> {
  const [verb, id] = ex.route!.name.split('/') as ['pause' | 'resume', string];
  if (!deps.mappings.some((m) => m.id === id)) {
    answerPage(ex, 404, notFoundPage('No mapping with that id in the current config.'));
    return;
  }
  await deps.store.pauseMapping(id, verb === 'pause');
  redirect(ex, '/console/mappings');
}
