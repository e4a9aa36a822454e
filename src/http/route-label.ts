import type { ServerResponse } from 'node:http';
import type { RouteKind } from './routes-table.js';

/**
 * The one route label of a request, for the access log, the error log and the metrics
 * (`hookrelay_requests_total{route}`): `wake`, `agent`, `events`, `runs` (a run by id too),
 * `healthz`, `metrics`, `console` (every page and asset of it), `mapping:<id>` once a mapping matched, and `unmatched` for the rest —
 * a hook no mapping takes, a path no route takes, a target that cannot be read. Every value
 * comes from the route table or the config, never from the request: the metrics' label set
 * stays bounded whatever is sent.
 *
 * The gate notes the route kind's label as soon as it has routed (so that a 401 or 405 of
 * `/hooks/wake` counts under `wake`); the engine narrows a hook to its mapping when it matches.
 */
const LABEL = Symbol('hookrelay.routeLabel');
type Labelled = ServerResponse & { [LABEL]?: string };

const KIND_LABELS: Record<RouteKind, string> = {
  wake: 'wake',
  agent: 'agent',
  events: 'events',
  runs: 'runs',
  run: 'runs',
  mapped: 'unmatched',
  health: 'healthz',
  metrics: 'metrics',
  console: 'console',
  none: 'unmatched',
};

/** `mapping:<id>` per mapping id, built once (ids come from the config, so the map stays small). */
const MAPPING_LABELS = new Map<string, string>();

/** Notes the label of a route kind (the gate, right after routing). */
export function noteKind(res: ServerResponse, kind: RouteKind): void {
  (res as Labelled)[LABEL] = KIND_LABELS[kind];
}

/** Notes the mapping that took a hook. */
export function noteMapping(res: ServerResponse, mappingId: string): void {
  let label = MAPPING_LABELS.get(mappingId);
  if (label === undefined) {
    label = `mapping:${mappingId}`;
    MAPPING_LABELS.set(mappingId, label);
  }
  (res as Labelled)[LABEL] = label;
}

/** The request's route label (`unmatched` when nothing was noted). */
export function routeLabel(res: ServerResponse): string {
  return (res as Labelled)[LABEL] ?? 'unmatched';
}
