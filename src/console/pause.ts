import type { Exchange } from '../http/exchange.js';
import { answerPage, redirect } from './answers.js';
import { notFoundPage } from './pages.js';
import type { PageDeps } from './routes.js';

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
