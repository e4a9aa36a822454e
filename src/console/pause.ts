import type { MappingConfig } from '../config/types.js';
import type { Exchange } from '../http/exchange.js';
import type { Store } from '../store/store.js';
import { answerPage, redirect } from './answers.js';
import { notFoundPage } from './pages.js';

/** What the console's pause and resume buttons need (CONTRACT.md §14, docs/flow-control.md). */
export interface PauseDeps {
  store: Pick<Store, 'pauseMapping'>;
  mappings: readonly MappingConfig[];
}

/** POST `/console/pause/ID` and `/console/resume/ID`: the write of `hookrelay pause`/`resume`, then back to the mappings. */
export async function pauseMapping(deps: PauseDeps, ex: Exchange): Promise<void> {
  const [verb, raw] = ex.route!.name.split('/') as ['pause' | 'resume', string];
  const id = decodeURIComponent(raw);
  if (!deps.mappings.some((m) => m.id === id)) {
    answerPage(ex, 404, notFoundPage('No mapping with that id in the current config.'));
    return;
  }
  await deps.store.pauseMapping(id, verb === 'pause');
  redirect(ex, '/console/mappings');
}
