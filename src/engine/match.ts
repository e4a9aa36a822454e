import type { CompiledMapping } from './compile-mapping.js';
import type { MatchRequest } from './engine.js';
import { whenHolds, type WhenFailure } from './mapping-answers.js';

/**
 * First mapping in order whose `match.path` (if given) equals the hook name, whose
 * `match.source` (if given) equals `payload.source`, whose `match.headers` (if given) are
 * all there with exactly those values, which takes the request's method, and whose
 * `match.when` (if given) is truthy — a `when` that throws counts as not matching, and is
 * reported in `failures`. Candidates per name are listed at load, so a request scans only the
 * mappings that can match its name.
 *
 * Admission comes before `when` (CONTRACT.md §12): a candidate the request is not admitted to
 * (`admitted`) is, without a `when`, the match it would have had — the scan stops there and
 * reports it `refused`; with one, its `when` is never evaluated and the scan goes on, so that a
 * request cannot make the `when` of a mapping it does not reach run. Each `when` has a step
 * budget of its own (jsonata-budget.ts): their number is the config's, not the payload's.
 */
export function createMatcher(mappings: CompiledMapping[]): (req: MatchRequest, admitted?: (mappingId: string) => boolean) => Found | Promise<Found> {
  const anyName = mappings.filter((m) => m.match.path === undefined);
  const byName = new Map<string, CompiledMapping[]>();
  for (const m of mappings) {
    const path = m.match.path;
    if (path !== undefined && !byName.has(path)) {
      byName.set(path, mappings.filter((c) => c.match.path === undefined || c.match.path === path));
    }
  }
  return (req, admitted) => scan({ candidates: byName.get(req.name) ?? anyName, req, admitted }, 0, {});
}

/** A match: the mapping, if any, the `match.when` expressions that threw on the way, and the candidate not admitted to report. */
export interface Found {
  mapping?: CompiledMapping;
  failures?: WhenFailure[];
  refused?: CompiledMapping;
}

/** One request's scan: its candidates, the request and its admission. */
interface Scan {
  candidates: readonly CompiledMapping[];
  req: MatchRequest;
  admitted: ((mappingId: string) => boolean) | undefined;
}

/**
 * The first of the candidates from `from` on that matches. Synchronous until a candidate has a
 * `match.when` (JSONata evaluates asynchronously): most requests meet none, and a mapped
 * request then pays no promise for its match.
 */
function scan(s: Scan, from: number, found: Found): Found | Promise<Found> {
  const { candidates, req, admitted } = s;
  const method = req.method ?? 'POST';
  for (let i = from; i < candidates.length; i++) {
    const m = candidates[i]!;
    if (m.method !== method || (m.match.source !== undefined && sourceOf(req.payload) !== m.match.source) || !headersHold(m.headers, req)) continue;
    if (admitted !== undefined && !admitted(m.id)) {
      if (m.when === undefined) {
        found.refused = m;
        return found;
      }
      found.refused ??= m;
      continue;
    }
    if (m.when === undefined) {
      found.mapping = m;
      return found;
    }
    return whenHolds(m.id, m.when, req).then((holds) => {
      if (holds === true) {
        found.mapping = m;
        return found;
      }
      if (holds !== false) (found.failures ??= []).push(holds);
      return scan(s, i + 1, found);
    });
  }
  return found;
}

/** Every required header is present with exactly the given value (names are lower-case on both sides), a credential header (`withheld`) too. */
function headersHold(required: CompiledMapping['headers'], { headers, withheld }: MatchRequest): boolean {
  for (const [name, value] of required) {
    const given = Object.hasOwn(headers, name) ? headers[name] : withheld !== undefined && Object.hasOwn(withheld, name) ? withheld[name] : undefined;
    if (given !== value) return false;
  }
  return true;
}

/** `payload.source` as text for comparison; only scalars count. */
function sourceOf(payload: Record<string, unknown>): string | undefined {
  const source = payload !== null && typeof payload === 'object' ? payload.source : undefined;
  if (typeof source === 'string') return source;
  if (typeof source === 'number' || typeof source === 'boolean') return String(source);
  return undefined;
}
