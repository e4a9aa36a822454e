import { append } from '../append.js';
import type { CompiledMapping } from './compile-mapping.js';
import type { MatchRequest } from './engine.js';
import type { Payload } from '../transform-types.js';
import { whenHolds, type WhenFailure } from './mapping-answers.js';

/** Finds the mapping of a request ({@link createMatcher}). */
export type Matcher = (req: MatchRequest, admitted?: (mappingId: string) => boolean) => Promise<Found>;

/** A match: the mapping, if any, the `match.when` expressions that threw on the way, and the candidate not admitted to report. */
export interface Found {
  mapping?: CompiledMapping;
  failures?: WhenFailure[];
  refused?: CompiledMapping;
}

/**
 * The first mapping whose `match` holds; admission comes before `when`, which never runs for a
 * refused one (CONTRACT.md §12). The mappings are indexed by path, method and an exact value each
 * requires (`source`, else one header); a request walks, in mapping order (CONTRACT.md §3), only
 * those its own values select and those with no exact value to look up.
 */
export function createMatcher(mappings: readonly CompiledMapping[]): Matcher {
  const { byPath, anyPath } = indexMappings(mappings);
  return async (req, admitted) => {
    const found: Found = {};
    const method = req.method ?? 'POST';
    const lists: Entry[][] = [];
    const source = sourceOf(req.payload);
    const named = byPath.get(req.name)?.[method];
    if (named !== undefined) selected(named, req, source, lists);
    if (anyPath[method] !== undefined) selected(anyPath[method], req, source, lists);
    const at = lists.map(() => 0);
    for (let m = next(lists, at); m !== undefined; m = next(lists, at)) {
      if ((m.match.source !== undefined && source !== m.match.source) || !headersHold(m.headers, req)) continue;
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

/** A mapping and its place in the match order. */
interface Entry {
  at: number;
  mapping: CompiledMapping;
}

/** The mappings of one path (or of any NAME) and method. */
interface Group {
  /** Those that require no exact value an index can look up, in order. */
  scan: Entry[];
  /** Those that require a `source`, by it, in order. */
  bySource: Map<string, Entry[]>;
  /** The others, by the name of one header they require, then by its value, in order. */
  byHeader: Map<string, Map<string, Entry[]>>;
}

/** The groups of one path (or of any NAME), by method. */
type Groups = { GET?: Group; POST?: Group };

/** One pass over the mappings: each lands in one list, found by its path, method and one required value. */
function indexMappings(mappings: readonly CompiledMapping[]): { byPath: Map<string, Groups>; anyPath: Groups } {
  // A mapping is filed under the header most mappings require, so a request looks up few headers.
  const headerCounts = new Map<string, number>();
  for (const m of mappings) for (const [name] of m.headers) headerCounts.set(name, (headerCounts.get(name) ?? 0) + 1);
  const byPath = new Map<string, Groups>();
  const anyPath: Groups = {};
  mappings.forEach((mapping, at) => {
    const path = mapping.match.path;
    let groups = path === undefined ? anyPath : byPath.get(path);
    if (groups === undefined) byPath.set(path!, (groups = {}));
    const group: Group = (groups[mapping.method] ??= { scan: [], bySource: new Map(), byHeader: new Map() });
    const entry = { at, mapping };
    let best: readonly [string, string] | undefined;
    for (const h of mapping.headers) if (best === undefined || headerCounts.get(h[0])! > headerCounts.get(best[0])!) best = h;
    if (mapping.match.source !== undefined) append(group.bySource, mapping.match.source, entry);
    else if (best !== undefined) append(group.byHeader.get(best[0]) ?? group.byHeader.set(best[0], new Map()).get(best[0])!, best[1], entry);
    else group.scan.push(entry);
  });
  return { byPath, anyPath };
}

/** Adds to `lists` the lists of `group` the request's values select (each in match order). */
function selected(group: Group, req: MatchRequest, source: string | undefined, lists: Entry[][]): void {
  if (group.scan.length > 0) lists.push(group.scan);
  const bySource = source === undefined ? undefined : group.bySource.get(source);
  if (bySource !== undefined) lists.push(bySource);
  for (const [name, byValue] of group.byHeader) {
    const given = headerOf(req, name);
    const list = given === undefined ? undefined : byValue.get(given);
    if (list !== undefined) lists.push(list);
  }
}

/** Takes the earliest mapping left in `lists` (a merge of a few lists in match order), moving its list's cursor in `at`. */
function next(lists: readonly Entry[][], at: number[]): CompiledMapping | undefined {
  let best = -1;
  for (let i = 0; i < lists.length; i++) {
    const head = lists[i]![at[i]!];
    if (head !== undefined && (best < 0 || head.at < lists[best]![at[best]!]!.at)) best = i;
  }
  return best < 0 ? undefined : lists[best]![at[best]!++]!.mapping;
}

/** Every required header is present with exactly the given value (names are lower-case on both sides), a credential header (`withheld`) too. */
function headersHold(required: CompiledMapping['headers'], req: MatchRequest): boolean {
  for (const [name, value] of required) if (headerOf(req, name) !== value) return false;
  return true;
}

/** A header's value as matching sees it, a credential header (`withheld`) too. */
export function headerOf({ headers, withheld }: MatchRequest, name: string): string | undefined {
  return Object.hasOwn(headers, name) ? headers[name] : withheld !== undefined && Object.hasOwn(withheld, name) ? withheld[name] : undefined;
}

/** `payload.source` as text for comparison; only scalars count. */
export function sourceOf(payload: Payload): string | undefined {
  const source = Array.isArray(payload) ? undefined : payload.source;
  if (typeof source === 'string') return source;
  if (typeof source === 'number' || typeof source === 'boolean') return String(source);
  return undefined;
}
