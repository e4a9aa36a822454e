/**
 * The hooks routes and the methods they take. The gate answers 405 from this table before
 * the token check (CONTRACT.md §4), and the router registers its handlers for the same kinds,
 * so the two cannot drift apart.
 */
export type RouteKind = 'wake' | 'agent' | 'events' | 'run' | 'mapped' | 'none';

export const ROUTE_METHODS: Record<RouteKind, string> = {
  wake: 'POST',
  agent: 'POST',
  events: 'GET',
  run: 'GET',
  mapped: 'POST',
  none: '',
};

/** Classifies the part of the path after `{hooks.path}/` (no query string). */
export function routeKind(name: string): RouteKind {
  if (name === '') return 'none';
  if (name === 'wake') return 'wake';
  if (name === 'agent') return 'agent';
  if (name === 'events') return 'events';
  if (name.startsWith('runs/') && name.length > 5 && name.indexOf('/', 5) === -1) return 'run';
  if (name === 'runs') return 'none';
  return 'mapped';
}

/** True when `method` is taken by a route of this kind (HEAD rides along with GET). */
export function methodAllowed(kind: RouteKind, method: string): boolean {
  const allowed = ROUTE_METHODS[kind];
  return method === allowed || (method === 'HEAD' && allowed === 'GET');
}
