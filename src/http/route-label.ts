import type { RouteKind } from './routes-table.js';

/**
 * The one route label of a request, for the access log, the error log, the request log and the
 * metrics (`hookrelay_requests_total{route}`): `wake`, `agent`, `events`, `runs` (a run by id
 * too), `healthz`, `metrics`, `console` (every page and asset of it), `mapping:<id>` once a
 * mapping matched, and `unmatched` for the rest — a hook no mapping takes, a path no route
 * takes, a target that cannot be read. Every value comes from the route table or the config,
 * never from the request: the metrics' label set stays bounded whatever is sent.
 *
 * The gate labels the request's record (exchange.ts) with its route kind's label as soon as it
 * has routed (so that a 401 or 405 of `/hooks/wake` counts under `wake`); a hook is narrowed
 * to its mapping when one matches (routes.ts).
 */
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

/** The label of a route kind. */
export function kindLabel(kind: RouteKind): string {
  return KIND_LABELS[kind];
}

/** The label of a hook that mapping `mappingId` took. */
export function mappingLabel(mappingId: string): string {
  let label = MAPPING_LABELS.get(mappingId);
  if (label === undefined) {
    label = `mapping:${mappingId}`;
    MAPPING_LABELS.set(mappingId, label);
  }
  return label;
}
