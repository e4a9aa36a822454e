import type { RouteKind } from './routes-table.js';

/**
 * The one route label of a request for logs and metrics (`hookrelay_requests_total{route}`): the
 * route kind's, `mapping:<id>` once a mapping matched, `unmatched` for the rest. Every value comes
 * from the route table or the config, never the request, so the label set stays bounded.
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
