import { expect } from 'chai';
import fc from 'fast-check';
import type { CompiledMapping } from '../../../src/engine/compile-mapping.js';
import type { MatchRequest } from '../../../src/engine/engine.js';
import { createMatcher, type Found } from '../../../src/engine/match.js';

/**
 * The indexed matcher against the rule it implements, written here as the plain ordered walk
 * (CONTRACT.md §3: first match wins; §12: path, source, headers and method, then admission,
 * then `when`): over random mapping lists and requests, both pick the same mapping, refuse the
 * same one, report the same `when` failures and evaluate the same `when`s in the same order.
 */
describe('engine: the mapping index picks what the ordered walk picks (property)', function () {
  this.timeout(60_000);

  const PATHS = ['a', 'b', '__proto__', 'constructor'];
  const SOURCES = ['s1', 's2', '1', 'true', '__proto__'];
  const HEADER_NAMES = ['x-a', 'x-b', 'x-c', 'x-gitlab-token'];
  const VALUES = ['1', '2', 'v', ''];
  /** What a fake `when` does: each reads the request, records that it ran, and answers or throws. */
  const WHENS = ['true', 'false', 'flag', 'throws', 'null'] as const;

  type Spec = { path?: string; source?: string; method: 'GET' | 'POST'; headers: [string, string][]; when?: (typeof WHENS)[number] };
  const mappingSpec: fc.Arbitrary<Spec> = fc.record(
    {
      path: fc.constantFrom(...PATHS),
      source: fc.constantFrom(...SOURCES),
      method: fc.constantFrom('GET' as const, 'POST' as const),
      headers: fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), fc.constantFrom(...VALUES)), { maxLength: 3 }),
      when: fc.constantFrom(...WHENS),
    },
    { requiredKeys: ['method', 'headers'] },
  );

  const scalar = fc.oneof(fc.constantFrom(...SOURCES), fc.constant(1), fc.constant(true), fc.constant(null), fc.constant({ x: 1 }));
  const headerRecord = fc.dictionary(fc.constantFrom(...HEADER_NAMES), fc.constantFrom(...VALUES), { maxKeys: 4 });
  const request = fc.record(
    {
      name: fc.constantFrom(...PATHS, 'other'),
      method: fc.constantFrom('GET' as const, 'POST' as const),
      payload: fc.record({ source: scalar, flag: fc.boolean() }, { requiredKeys: [] }),
      headers: headerRecord,
      withheld: headerRecord,
    },
    { requiredKeys: ['name', 'payload', 'headers'] },
  );
  /** Ids a scoped token or a signature does not admit; undefined: nothing is screened. */
  const refusedIds = fc.option(fc.uniqueArray(fc.nat({ max: 60 }).map((i) => `m${i}`), { maxLength: 20 }), { nil: undefined });

  /** Compiled mappings as the engine holds them, with `when`s that log each evaluation to `ran`. */
  function compiled(specs: Spec[], ran: string[]): CompiledMapping[] {
    return specs.map((s, i) => {
      const id = `m${i}`;
      const match: CompiledMapping['match'] = {};
      if (s.path !== undefined) match.path = s.path;
      if (s.source !== undefined) match.source = s.source;
      const when = s.when === undefined ? undefined : async (ctx: Record<string, unknown>) => {
        ran.push(id);
        if (s.when === 'throws') throw Object.assign(new Error(`when of ${id}`), { code: 'T1001' });
        if (s.when === 'flag') return (ctx.payload as { flag?: boolean }).flag;
        return s.when === 'true' ? true : s.when === 'false' ? false : null;
      };
      return { id, match, method: s.method, headers: s.headers, when } as unknown as CompiledMapping;
    });
  }

  /** The rule itself: every mapping in order. */
  async function orderedWalk(mappings: CompiledMapping[], req: MatchRequest, admitted?: (id: string) => boolean): Promise<Found> {
    const found: Found = {};
    for (const m of mappings) {
      if (m.match.path !== undefined && m.match.path !== req.name) continue;
      if (m.method !== (req.method ?? 'POST')) continue;
      const raw = Array.isArray(req.payload) ? undefined : req.payload.source;
      const source = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : undefined;
      if (m.match.source !== undefined && m.match.source !== source) continue;
      const header = (name: string) => (Object.hasOwn(req.headers, name) ? req.headers[name] : req.withheld && Object.hasOwn(req.withheld, name) ? req.withheld[name] : undefined);
      if (!m.headers.every(([name, value]) => header(name) === value)) continue;
      if (admitted && !admitted(m.id)) {
        if (!m.when) return { ...found, refused: m };
        found.refused ??= m;
        continue;
      }
      if (!m.when) return { ...found, mapping: m };
      try {
        const v = await m.when({ payload: req.payload, headers: req.headers, query: req.query });
        if (v === true) return { ...found, mapping: m };
      } catch (err) {
        (found.failures ??= []).push({ mappingId: m.id, step: 'match.when', code: (err as { code: string }).code, message: (err as Error).message });
      }
    }
    return found;
  }

  const shown = (f: Found) => ({ mapping: f.mapping?.id, refused: f.refused?.id, failures: f.failures?.map(({ mappingId, step, code }) => ({ mappingId, step, code })) });

  async function agree(specs: Spec[], reqs: MatchRequest[], refused: string[] | undefined): Promise<void> {
    const [ranIndexed, ranWalk] = [[] as string[], [] as string[]];
    const [indexedMappings, walkMappings] = [compiled(specs, ranIndexed), compiled(specs, ranWalk)];
    const match = createMatcher(indexedMappings);
    const admitted = refused && ((id: string) => !refused.includes(id));
    for (const req of reqs) {
      const got = await match(req, admitted);
      const want = await orderedWalk(walkMappings, req, admitted);
      expect(shown(got), JSON.stringify(req)).to.deep.equal(shown(want));
    }
    expect(ranIndexed).to.deep.equal(ranWalk);
  }

  const asRequest = (r: Omit<MatchRequest, 'query'>): MatchRequest => ({ ...r, query: {} });

  it('on small lists with every kind of mapping mixed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mappingSpec, { maxLength: 30 }), fc.array(request, { minLength: 1, maxLength: 10 }), refusedIds, async (specs, reqs, refused) => {
        await agree(specs, reqs.map(asRequest), refused);
      }),
      { numRuns: 400 },
    );
  });

  it('on many mappings of one path told apart by source or a header, among catch-alls', async () => {
    const told = fc.oneof(
      fc.nat({ max: 199 }).map((i): Spec => ({ path: 'a', source: `s${i}`, method: 'POST', headers: [] })),
      fc.nat({ max: 199 }).map((i): Spec => ({ path: 'a', method: 'POST', headers: [['x-a', `${i}`]] })),
      fc.nat({ max: 199 }).map((i): Spec => ({ path: 'a', method: 'POST', headers: [['x-b', `${i}`], ['x-a', `${i % 3}`]], when: 'flag' })),
      { weight: 1, arbitrary: mappingSpec },
    );
    const req = fc.record({
      name: fc.constantFrom('a', 'b'),
      payload: fc.record({ source: fc.nat({ max: 199 }).map((i) => `s${i}`), flag: fc.boolean() }, { requiredKeys: [] }),
      headers: fc.record({ 'x-a': fc.nat({ max: 199 }).map(String), 'x-b': fc.nat({ max: 199 }).map(String) }, { requiredKeys: [] }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(told, { minLength: 50, maxLength: 400 }), fc.array(req, { minLength: 1, maxLength: 20 }), refusedIds, async (specs, reqs, refused) => {
        await agree(specs, reqs.map(asRequest), refused);
      }),
      { numRuns: 60 },
    );
  });

  it('keeps a catch-all before a later mapping with a source, and a later catch-all after it', async () => {
    const specs: Spec[] = [
      { path: 'a', method: 'POST', headers: [['x-a', '1']] },
      { path: 'a', method: 'POST', headers: [] },
      { path: 'a', source: 's1', method: 'POST', headers: [] },
    ];
    const match = createMatcher(compiled(specs, []));
    const req = (headers: Record<string, string>) => asRequest({ name: 'a', payload: { source: 's1' }, headers });
    expect((await match(req({ 'x-a': '1' }))).mapping?.id).to.equal('m0');
    expect((await match(req({}))).mapping?.id).to.equal('m1');
    const later = createMatcher(compiled([specs[2]!, { method: 'POST', headers: [] }], []));
    expect((await later(req({}))).mapping?.id).to.equal('m0');
    expect((await later(asRequest({ name: 'a', payload: { source: 's2' }, headers: {} }))).mapping?.id).to.equal('m1');
  });
});
