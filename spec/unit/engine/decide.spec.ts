import { expect } from 'chai';
import type { Engine } from '../../../src/engine/engine.js';
import type { DecidePorts, DecideRequest, KeptAnswer } from '../../../src/engine/decide.js';
import { HookError } from '../../../src/errors.js';
import { engineWith, NOW } from './engine-harness.js';

/**
 * The engine's one call per request (STYLE.md #3): what the listener, `hookrelay test` and the
 * console's dry run hand it, and the one decision it returns. The order it keeps is CONTRACT.md
 * §8 and §12: a repeat is answered before anything is rendered; a mapping the request is not
 * admitted to never runs its `when`.
 */
describe('engine: decide()', () => {
  let engine: Engine;
  before(async () => {
    engine = await engineWith([
      { id: 'scoped', match: { path: 'only', when: 'x = 1' }, action: 'wake', textTemplate: 'w' },
      { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: '{{text}}' },
      { id: 'keyed', match: { path: 'keyed' }, action: 'wake', textTemplate: 't', idempotencyKey: '{{id}}' },
      { id: 'many', match: { path: 'many' }, action: 'wake', textTemplate: '{{item.t}}', forEach: 'items', idempotencyKey: '{{item.id}}', ratePerMinute: 5 },
      { id: 'ping', match: { path: 'ping' }, action: 'respond', respond: { status: 200, contentType: 'text/plain', body: 'pong' } },
    ]);
  });
  after(() => engine.close());

  const req = (name: string, payload: Record<string, unknown>, extra: Partial<DecideRequest> = {}): DecideRequest => ({
    route: 'mapped', name, method: 'POST', path: `/hooks/${name}`, query: '', headers: {},
    body: Buffer.from(JSON.stringify(payload)), payload: () => payload, who: {}, now: NOW, ...extra,
  });
  const none: DecidePorts['keys'] = async (hashes) => hashes.map(() => undefined);

  it('actions with the mapping, its fan-out and its rate, and the answer of what was accepted', async () => {
    const d = await engine.decide(req('note', { text: 'hi' }), { keys: none });
    expect(d.type).to.equal('act');
    if (d.type !== 'act') return;
    expect(d).to.include({ mappingId: 'note', fanOut: false });
    expect(d.actions[0]).to.include({ kind: 'wake', text: 'hi' });
    expect(await d.answer([{ action: 'wake', eventId: 'e1' }])).to.deep.equal({ status: 200, body: '{"ok":true,"action":"wake","eventId":"e1"}' });
  });

  it('no match, with why', async () => {
    const d = await engine.decide(req('nothing', {}));
    expect(d.type).to.equal('no_match');
    expect(d.type === 'no_match' && d.error.code).to.equal('no_mapping');
    const only = await engine.decide(req('only', { x: 2 }));
    expect(only.type === 'no_match' && only.explanation).to.deep.equal({ mappings: 1, verdicts: [{ mapping: 'scoped', failed: 'when' }] });
    expect(only.type === 'no_match' && only.error.message).to.equal('no mapping matches POST /hooks/only with this payload: the one mapping on this path did not match');
  });

  it('explains only when nothing matched or when asked: never a refused request, whose `when` must not run', async () => {
    expect((await engine.decide(req('note', { text: 'hi' }))).explanation).to.equal(undefined);
    const refused = await engine.decide(req('only', { x: 1 }, { who: { routes: new Set(['note']) } }));
    expect(refused).to.include({ type: 'refused' });
    expect(refused.explanation).to.equal(undefined);
    const asked = await engine.decide(req('note', { text: 'hi' }), { explain: true });
    expect(asked.explanation).to.deep.equal({ mappings: 1, verdicts: [{ mapping: 'note', matched: true, first: true }] });
  });

  it('a respond mapping: the fixed answer, no key looked up', async () => {
    const asked: string[][] = [];
    const d = await engine.decide(req('ping', {}, { headers: { 'idempotency-key': 'k' } }), { keys: async (h) => (asked.push(h), h.map(() => undefined)) });
    expect(d).to.include({ type: 'respond', status: 200, mappingId: 'ping' });
    expect(asked).to.deep.equal([]);
  });

  it('a header key kept for the same body: the first answer, before the mapping renders', async () => {
    const kept: KeptAnswer[] = [];
    const keys: DecidePorts['keys'] = async (hashes) => hashes.map(() => kept[0]);
    const first = await engine.decide(req('note', { text: 'hi' }, { headers: { 'idempotency-key': 'k1' } }), { keys });
    expect(first.type === 'act' && first.key).to.be.an('object');
    if (first.type !== 'act') return;
    kept.push({ requestHash: first.key!.requestHash, status: 200, body: '{"ok":true}' });
    // The same key and bytes, though the payload would not render now: the repeat is answered first.
    const again = await engine.decide(req('note', { text: 'hi' }, { headers: { 'idempotency-key': 'k1' }, payload: () => ({}) }), { keys });
    expect(again).to.include({ type: 'replay', mappingId: 'note' });
    // The same key over other bytes: 422.
    const other = await engine.decide(req('note', { text: 'bye' }, { headers: { 'idempotency-key': 'k1' } }), { keys });
    expect(other.type).to.equal('refused');
    expect(other.type === 'refused' && (other.error as HookError).code).to.equal('idempotency_key_reused');
  });

  it('a console replay neither reads nor holds a key', async () => {
    const d = await engine.decide(req('keyed', { id: 'a' }, { who: { replay: true } }), { keys: async () => { throw new Error('no key is read'); } });
    expect(d.type === 'act' && d.key).to.equal(undefined);
  });

  it('forEach with keys: each item looked up, the ones kept answered as replayed', async () => {
    const d0 = await engine.decide(req('many', { items: [{ id: 1, t: 'a' }, { id: 2, t: 'b' }] }), { keys: none });
    if (d0.type !== 'act') throw new Error(d0.type);
    const firstKey = d0.items![0]!.key!;
    const keys: DecidePorts['keys'] = async (hashes) => hashes.map((h) => (h === firstKey.key ? { requestHash: firstKey.requestHash, status: 200, body: '{"action":"wake","eventId":"e1"}' } : undefined));
    const d = await engine.decide(req('many', { items: [{ id: 1, t: 'a' }, { id: 2, t: 'b' }] }), { keys });
    expect(d).to.include({ type: 'act', rate: 5, fanOut: true });
    if (d.type !== 'act') return;
    expect(d.items!.map((i) => i.replayed)).to.deep.equal([{ action: 'wake', eventId: 'e1', replayed: true }, undefined]);
  });

  it('admission: a scoped token that does not reach the matching mapping gets 403, naming the mapping', async () => {
    const d = await engine.decide(req('only', { x: 1 }, { who: { routes: new Set(['note']) } }));
    expect(d).to.include({ type: 'refused', mappingId: 'scoped' });
    expect(d.type === 'refused' && (d.error as HookError).code).to.equal('forbidden');
  });

  it('the signature is checked before the body is parsed: a bad one is the answer', async () => {
    const d = await engine.decide(req('note', {}, { payload: () => { throw new HookError('invalid_json', 'not JSON'); } }), {
      verify: () => { throw new HookError('invalid_signature', 'bad'); },
    });
    expect(d).to.include({ type: 'refused', stage: 'signature' });
  });

  it('wake and agent: validated, keyed, and for agent the wait read from the query', async () => {
    const wake = await engine.decide({ ...req('', { text: 'hello' }), route: 'wake', path: '/hooks/wake' }, { keys: none });
    expect(wake.type === 'act' && wake.actions[0]!.kind).to.equal('wake');
    const bad = await engine.decide({ ...req('', { message: 'm' }), route: 'agent', path: '/hooks/agent', query: 'wait=0' }, { keys: none });
    expect(bad.type === 'refused' && (bad.error as HookError).code).to.equal('invalid_payload');
    const agent = await engine.decide({ ...req('', { message: 'm', idempotencyKey: 'b1' }), route: 'agent', path: '/hooks/agent', query: 'wait=2' }, { keys: none });
    expect(agent.type === 'act' && agent.wait).to.deep.equal({ ms: 2000, completion: false });
    expect(agent.type === 'act' && agent.key).to.be.an('object');
  });
});
