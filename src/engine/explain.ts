import type { CompiledMapping } from './compile-mapping.js';
import type { MatchRequest } from './engine.js';
import { whenHolds } from './mapping-answers.js';
import { headerOf, sourceOf } from './match.js';
import type { Explanation, Verdict } from '../match-explanation.js';

export type { Explanation, Verdict };

/**
 * Why each mapping on a path did or did not take a request (CONTRACT.md §16): the same conditions
 * as match.ts, walked in the same order over every mapping, for `test --explain` and for a
 * request nothing matched. The accept path never calls it.
 */

/** The explainer over the compiled mappings, in config order. */
export function createExplainer(mappings: readonly CompiledMapping[]): (req: MatchRequest) => Promise<Explanation> {
  return async (req) => {
    const onPath = mappings.filter((m) => m.match.path === undefined || m.match.path === req.name);
    const verdicts: Verdict[] = [];
    let taken = false;
    for (const m of onPath) {
      const v = await verdictOf(m, req);
      if ('matched' in v) {
        v.first = !taken;
        taken = true;
      }
      verdicts.push(v);
    }
    return { mappings: onPath.length, verdicts };
  };
}

async function verdictOf(m: CompiledMapping, req: MatchRequest): Promise<Verdict> {
  const mapping = m.id;
  if (m.method !== (req.method ?? 'POST')) return { mapping, failed: 'method', want: m.method };
  if (m.match.source !== undefined && sourceOf(req.payload) !== m.match.source) return { mapping, failed: 'source', want: m.match.source };
  for (const [name, value] of m.headers) {
    if (headerOf(req, name) !== value) return { mapping, failed: 'header', header: name };
  }
  if (m.when === undefined) return { mapping, matched: true, first: false };
  const holds = await whenHolds(m.id, m.when, req);
  if (holds === true) return { mapping, matched: true, first: false };
  return holds === false ? { mapping, failed: 'when' } : { mapping, failed: 'when', error: { code: holds.code, message: holds.message } };
}
