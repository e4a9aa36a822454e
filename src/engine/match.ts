import type { CompiledMapping } from './compile-mapping.js';
import type { MatchRequest } from './engine.js';
import type { Payload } from '../transform-types.js';
import { whenHolds, type WhenFailure } from './mapping-answers.js';

/** The first mapping whose `match` holds; admission comes before `when`, which never runs for a refused one (CONTRACT.md §12). */
export function createMatcher(named: ReadonlyMap<string, readonly CompiledMapping[]>, anyName: readonly CompiledMapping[]): (req: MatchRequest, admitted?: (mappingId: string) => boolean) => Promise<Found> {
  return async (req, admitted) => {
    const found: Found = {};
    const method = req.method ?? 'POST';
    for (const m of named.get(req.name) ?? anyName) {
      if (m.method !== method || (m.match.source !== undefined && sourceOf(req.payload) !== m.match.source) || !headersHold(m.headers, req)) continue;
      if (admitted !== undefined && !admitted(m.id)) {
        if (m.when === undefined) return { ...found, refused: m };
        found.refused ??= m;
        continue;
      }
      const holds = m.when === undefined || (await whenHolds(m.id, m.when, req));
      if (holds === true) return { ...found, mapping: m };
      if (holds !== false) (found.failures ??= []).push(holds);
    }
    return found;
  };
}

/** A match: the mapping, if any, the `match.when` expressions that threw on the way, and the candidate not admitted to report. */
export interface Found {
  mapping?: CompiledMapping;
  failures?: WhenFailure[];
  refused?: CompiledMapping;
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
function sourceOf(payload: Payload): string | undefined {
  const source = Array.isArray(payload) ? undefined : payload.source;
  if (typeof source === 'string') return source;
  if (typeof source === 'number' || typeof source === 'boolean') return String(source);
  return undefined;
}
