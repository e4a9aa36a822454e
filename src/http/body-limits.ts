import type { HooksConfig } from '../config/types.js';
import type { Route } from './routes-table.js';

/** The body limit of a request, and how a 413 names it (the key to change). */
export interface BodyLimit {
  bytes: number;
  name: string;
}

/** The body limit of a routed request: decided from its path alone, before any byte of the body is read. */
export type BodyLimits = (route: Route) => BodyLimit;

/** `hooks.maxBodyBytes`, or on a `match.path` the largest `maxBodyBytes` of its mappings (CONTRACT.md §12). */
export function createBodyLimits(hooks: Pick<HooksConfig, 'maxBodyBytes' | 'mappings'>): BodyLimits {
  const fallback: BodyLimit = Object.freeze({ bytes: hooks.maxBodyBytes, name: 'hooks.maxBodyBytes' });
  const byPath = new Map<string, BodyLimit>();
  for (const m of hooks.mappings) {
    const path = m.match.path;
    if (path === undefined) continue;
    const limit = m.maxBodyBytes === undefined ? fallback : { bytes: m.maxBodyBytes, name: `the maxBodyBytes of mapping "${m.id}"` };
    const known = byPath.get(path);
    if (!known || limit.bytes > known.bytes) byPath.set(path, Object.freeze(limit));
  }
  return (route) => (route.kind === 'mapped' ? byPath.get(route.name) ?? fallback : fallback);
}
