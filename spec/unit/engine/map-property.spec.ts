import { expect } from 'chai';
import fc from 'fast-check';
import { ERRORS, HookError } from '../../../src/errors.js';
import type { Action, AgentAction } from '../../../src/action.js';
import type { HookRequest } from '../../../src/engine/compile-mapping.js';
import type { Engine } from '../../../src/engine/engine.js';
import { direct, engineWith, map, NOW } from './engine-harness.js';
import type { MappingInput } from './make-config.js';

/**
 * Properties of the pure mapping step over arbitrary requests: it fails only with a
 * catalogued HookError, every action it returns is one a direct /wake or /agent body could
 * have produced, it pollutes no prototype, and it is deterministic for a given clock and ids.
 */
describe('engine: map() over arbitrary requests (property)', function () {
  this.timeout(20_000);

  /** Names the mappings below answer to; `other` matches none of them. */
  const NAMES = ['note', 'task', 'calc', 'each', 'echo', 'typed', 'other'];
  const mappings: MappingInput[] = [
    { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: '{{text}} {{a.b}} {{list.[0]}} {{headers.x-h}} {{query.q}} {{__proto__}} {{constructor.name}}' },
    {
      id: 'task', match: { path: 'task' }, action: 'agent', name: '{{n}}', messageTemplate: '{{msg}} {{payload}}',
      sessionKey: 'hook:{{k}}', to: '{{to}}', model: '{{m}}', deliver: false,
    },
    { id: 'calc', match: { path: 'calc' }, action: 'agent', engine: 'jsonata', messageTemplate: '$string(payload) & " " & $string(headers) & path', sessionKey: '"hook:" & $string(k)' },
    { id: 'each', match: { path: 'each' }, forEach: 'items', action: 'agent', messageTemplate: 'item {{index}}: {{item}} {{prototype}}', wakeMode: 'next-heartbeat' },
    { id: 'echo', match: { path: 'echo' }, action: 'agent', messageTemplate: 'unused', transform: { module: 'echo.ts' } },
    { id: 'proto', match: { path: 'proto' }, action: 'wake', textTemplate: '{{text}}|{{__proto__}}|{{constructor}}|{{prototype}}|{{a.__proto__}}|{{a.constructor}}|{{a.prototype}}' },
    { id: 'proto-jsonata', match: { path: 'proto-jsonata' }, action: 'wake', engine: 'jsonata', textTemplate: 'text & "|" & $string(__proto__) & $string(constructor) & $string(prototype) & $string(a.__proto__) & $string(a.constructor) & $string(a.prototype) & $string(payload.constructor)' },
    { id: 'typed', match: { path: 'typed', source: 'typed' }, action: 'wake', textTemplate: '{{text}}' },
  ];

  let engine: Engine;
  let again: Engine;
  before(async () => {
    engine = await engineWith(mappings, { hooks: { maxFanOut: 5 } });
    again = await engineWith(mappings, { hooks: { maxFanOut: 5 } });
  });

  const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];
  const key = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('text', 'a', 'b', 'list', 'msg', 'n', 'k', 'to', 'm', 'items', 'source', 'x', 'payload', 'headers') },
    { weight: 2, arbitrary: fc.constantFrom(...PROTO_KEYS, 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__') },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  );
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }), // lone surrogates, controls
    fc.constantFrom('', '  ', 'hook:x', 'now', 'next-heartbeat', 'telegram', '{{x}}', '$string(1)', '<untrusted-content>', '\u0000\r\n'),
    fc.nat({ max: 20_000 }).map((n) => 'x'.repeat(n)),
  );
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 5 }),
    ),
  })).value;
  /** Payloads as JSON.parse makes them: `__proto__` is an own key there, which a literal cannot make. */
  const payload = fc.dictionary(key, json, { maxKeys: 8 }).map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>);
  /** Deep nesting, past what a recursive walk would survive. */
  const deep = fc.nat({ max: 20_000 }).map((d) => JSON.parse(`{"a":${'['.repeat(d)}"deep"${']'.repeat(d)},"text":"t"}`) as Record<string, unknown>);
  const strings = fc.dictionary(fc.oneof(key, fc.constantFrom('x-h', 'q')), fc.string({ maxLength: 20 }), { maxKeys: 4 });
  const request = fc.record({
    name: fc.constantFrom(...NAMES),
    payload: fc.oneof({ weight: 6, arbitrary: payload }, { weight: 1, arbitrary: deep }),
    headers: strings,
    query: strings,
  }).map((r): HookRequest => ({ ...r, url: `/hooks/${r.name}`, now: NOW }));

  /** The body a direct request would send for this action. */
  function directBody(a: Action): Record<string, unknown> {
    if (a.kind === 'wake') return { text: a.text, mode: a.mode };
    const { kind: _k, source: _s, unsafe: _u, ...body } = a;
    return body;
  }

  it('throws nothing but catalogued HookErrors; every action passes the direct validation; no pollution; deterministic', async () => {
    const seen = { actions: 0, skipped: 0, no_match: 0, respond: 0, error: 0, protoKey: 0 };
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        if (PROTO_KEYS.some((k) => Object.hasOwn(req.payload, k))) seen.protoKey++;
        let result;
        try {
          result = await map(engine, req);
          seen[result.type]++;
        } catch (err) {
          seen.error++;
          expect(err, String(err)).to.be.instanceOf(HookError);
          expect(Object.hasOwn(ERRORS, (err as HookError).code), (err as HookError).code).to.equal(true);
          expect((err as HookError).status).to.equal(ERRORS[(err as HookError).code].status);
          expect(await map(again, req).then(() => 'resolved', (e: HookError) => e.code)).to.equal((err as HookError).code);
          return;
        } finally {
          expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
          for (const k of Object.getOwnPropertyNames(Object.prototype)) expect(typeof (Object.prototype as any)[k] === 'function' || k === '__proto__', k).to.equal(true);
        }
        expect(await map(again, req)).to.deep.equal(result);
        if (result.type !== 'actions') return;
        expect(result.actions.length).to.be.within(1, 5);
        for (const action of result.actions) {
          const body = directBody(action);
          const fromBody = await direct(engine, action.kind, body);
          // sessionKeyGiven says whether the key was named or generated (forward mode sends only a named
          // one); the direct body always names the key it is given, so the flag is left out of the comparison.
          const { sessionKeyGiven: _d, ...fromDirect } = fromBody as AgentAction;
          const { sessionKeyGiven: _a, ...fromMapping } = action as AgentAction;
          expect({ ...fromDirect, source: action.source, unsafe: action.unsafe }).to.deep.equal(fromMapping);
        }
      }),
      { numRuns: 400 },
    );
    // The runs reached every outcome (a property that only ever saw no_match would prove nothing).
    for (const outcome of ['actions', 'skipped', 'no_match', 'error', 'protoKey'] as const) expect(seen[outcome], `${outcome}: ${JSON.stringify(seen)}`).to.be.above(5);
  });

  it('a payload key named like a prototype member never reaches a template (Handlebars or JSONata), at the top or nested', async () => {
    const leak = fc.string({ minLength: 1, maxLength: 10 }).filter((t) => t.trim() !== '').map((t) => `LEAK${t}`);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('proto', 'proto-jsonata'), fc.subarray(PROTO_KEYS, { minLength: 1 }), leak, async (name, keys, v) => {
        const bad = keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',');
        const req: HookRequest = { name, payload: JSON.parse(`{"text":"t",${bad},"a":{${bad}}}`), headers: {}, query: {}, url: `/hooks/${name}`, now: NOW };
        const result = await map(engine, req);
        expect(result.type).to.equal('actions');
        const action = (result as Extract<typeof result, { type: 'actions' }>).actions[0]!;
        expect(action.kind === 'wake' && action.text).to.not.include('LEAK');
      }),
      { numRuns: 100 },
    );
  });
});
