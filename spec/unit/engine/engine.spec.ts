import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { HookError } from '../../../src/errors.js';
import type { HookRequest, MapResult } from '../../../src/engine/action.js';
import { createEngine, type Engine } from '../../../src/engine/engine.js';
import { makeConfig, type ConfigInput, type MappingInput } from './make-config.js';

const NOW = new Date('2024-06-01T12:00:00Z');

function request(name: string, payload: Record<string, unknown>, extra: Partial<HookRequest> = {}): HookRequest {
  return { name, payload, headers: {}, query: {}, url: `/hooks/${name}`, now: NOW, ...extra };
}

function engineWith(mappings: MappingInput[], input: ConfigInput = {}): Promise<Engine> {
  return createEngine(makeConfig({ ...input, hooks: { ...input.hooks, mappings } }), { uuid: () => 'uuid-1', jsonata: { timeoutMs: 100 } });
}

async function configProblems(mappings: MappingInput[], input: ConfigInput = {}): Promise<string[]> {
  const err = await engineWith(mappings, input).then(() => undefined, (e: unknown) => e);
  expect(err).to.be.instanceOf(ConfigError);
  return (err as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
}

async function mapError(engine: Engine, req: HookRequest): Promise<HookError> {
  const err = await engine.map(req).then(() => undefined, (e: unknown) => e);
  expect(err).to.be.instanceOf(HookError);
  return err as HookError;
}

function idOf(result: MapResult): string | undefined {
  return result.type === 'no_match' ? undefined : result.mappingId;
}

function actionsOf(result: MapResult) {
  expect(result.type).to.equal('actions');
  return (result as Extract<MapResult, { type: 'actions' }>).actions;
}

describe('engine/engine', () => {
  describe('createEngine', () => {
    it('lists mapping ids in order and says which mappings fan out', async () => {
      const engine = await engineWith([{ id: 'a', messageTemplate: 'x' }, { id: 'b', forEach: 'items', messageTemplate: 'y' }, { messageTemplate: 'z' }]);
      expect(engine.mappings).to.deep.equal(['a', 'b', 'mapping-3']);
      expect(engine.fanOut('b')).to.equal(true);
      expect(engine.fanOut('a')).to.equal(false);
      expect(engine.fanOut('nope')).to.equal(false);
    });

    it('collects every problem with its YAML path into one ConfigError', async () => {
      const problems = await configProblems([
        { messageTemplate: '{{#if}}' },
        { engine: 'jsonata', messageTemplate: 'a.(' },
        { messageTemplate: 'ok', name: '{{shout x}}', sessionKey: '{{> p}}' },
        { transform: { module: '../escape.ts' } },
        { transform: { module: '/etc/passwd.js' } },
        { transform: { module: 'echo.json' } },
        { transform: { module: 'echo.ts', export: 'notAFunction' } },
        { transform: { module: 'no-function.mjs' } },
        { action: 'wake' },
        {},
        { forEach: 'a.b', messageTemplate: 'x' },
        { forEach: '__proto__', messageTemplate: 'x' },
      ]);
      const paths = problems.map((p) => p.slice(0, p.indexOf(': ')));
      expect(paths).to.deep.equal([
        'hooks.mappings[0].messageTemplate',
        'hooks.mappings[1].messageTemplate',
        'hooks.mappings[2].name',
        'hooks.mappings[2].sessionKey',
        'hooks.mappings[3].transform.module',
        'hooks.mappings[4].transform.module',
        'hooks.mappings[5].transform.module',
        'hooks.mappings[6].transform.export',
        'hooks.mappings[7].transform.module',
        'hooks.mappings[8].textTemplate',
        'hooks.mappings[9].messageTemplate',
        'hooks.mappings[10].forEach',
        'hooks.mappings[11].forEach',
      ]);
      expect(problems[7]).to.match(/notAFunction \(number\)/);
      for (const problem of problems) expect(problem).to.not.include('\n');
    });

    it('compiles templates of both kinds even when only one is used', async () => {
      expect(await configProblems([{ messageTemplate: 'ok', textTemplate: '{{#each}}' }])).to.have.length(1);
    });
  });

  describe('matching', () => {
    const mappings: MappingInput[] = [
      { id: 'gh-release', match: { path: 'github', source: 'release' }, messageTemplate: 'release' },
      { id: 'gh', match: { path: 'github' }, messageTemplate: 'github' },
      { id: 'by-source', match: { source: 'stripe' }, messageTemplate: 'stripe anywhere' },
      { id: 'numbers', match: { source: '42' }, messageTemplate: 'numeric source' },
      { id: 'gh-late', match: { path: 'github' }, messageTemplate: 'never reached' },
    ];

    it('picks the first mapping whose path and source hold', async () => {
      const engine = await engineWith(mappings);
      expect(idOf(await engine.map(request('github', { source: 'release' })))).to.equal('gh-release');
      expect(idOf(await engine.map(request('github', { source: 'push' })))).to.equal('gh');
      expect(idOf(await engine.map(request('github', {})))).to.equal('gh');
      expect(idOf(await engine.map(request('github', { source: 'stripe' })))).to.equal('gh');
      expect(idOf(await engine.map(request('billing', { source: 'stripe' })))).to.equal('by-source');
      expect(idOf(await engine.map(request('other', { source: 42 })))).to.equal('numbers');
    });

    it('answers no_match when nothing holds', async () => {
      const engine = await engineWith(mappings);
      expect(await engine.map(request('gitlab', { source: 'push' }))).to.deep.equal({ type: 'no_match' });
      expect(await engine.map(request('gitlab', { source: { nested: 'stripe' } }))).to.deep.equal({ type: 'no_match' });
      expect(await engine.map(request('__proto__', {}))).to.deep.equal({ type: 'no_match' });
      expect(await (await engineWith([])).map(request('x', {}))).to.deep.equal({ type: 'no_match' });
    });

    it('lets a mapping without path match any name', async () => {
      const engine = await engineWith([{ id: 'gh', match: { path: 'github' }, messageTemplate: 'g' }, { id: 'all', messageTemplate: 'a' }]);
      expect(idOf(await engine.map(request('github', {})))).to.equal('gh');
      expect(idOf(await engine.map(request('anything', {})))).to.equal('all');
    });
  });

  describe('rendering', () => {
    it('renders an agent action through the same validation as /agent', async () => {
      const engine = await engineWith([
        {
          id: 'gh',
          match: { path: 'github' },
          name: 'GitHub',
          messageTemplate: 'Push to {{repository.full_name}} by {{pusher.name}}: {{commits[0].message}} ({{path}}, {{headers.x-github-event}}, {{query.ref}}, {{now}})',
          sessionKey: 'hook:github:{{repository.id}}',
          deliver: true,
          provider: 'telegram',
          to: '{{query.chat}}',
          thinking: 'low',
          timeoutSeconds: 60,
        },
      ]);
      const result = await engine.map(
        request('github', { repository: { full_name: 'a/b', id: 7 }, pusher: { name: 'ann' }, commits: [{ message: 'fix' }] }, {
          headers: { 'x-github-event': 'push' },
          query: { ref: 'main', chat: '99' },
        }),
      );
      expect(result).to.deep.equal({
        type: 'actions',
        mappingId: 'gh',
        actions: [
          {
            kind: 'agent',
            message: 'Push to a/b by ann: fix (github, push, main, 2024-06-01T12:00:00.000Z)',
            name: 'GitHub',
            sessionKey: 'hook:github:7',
            wakeMode: 'now',
            deliver: true,
            provider: 'telegram',
            to: '99',
            thinking: 'low',
            timeoutSeconds: 60,
            source: 'mapping:gh',
            unsafe: false,
          },
        ],
      });
    });

    it('renders wake actions with the mapping wakeMode', async () => {
      const engine = await engineWith([{ id: 'w', action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'Alert: {{alert}}' }]);
      expect(actionsOf(await engine.map(request('x', { alert: { level: 2 } })))).to.deep.equal([
        { kind: 'wake', text: 'Alert: {"level":2}', mode: 'next-heartbeat', source: 'mapping:w', unsafe: false },
      ]);
    });

    it('uses the injected clock when the request carries none', async () => {
      const engine = await createEngine(makeConfig({ hooks: { mappings: [{ messageTemplate: '{{now}}' }] } }), { now: () => NOW });
      const req = request('x', {});
      delete (req as Partial<HookRequest>).now;
      expect(actionsOf(await engine.map(req))[0]).to.include({ message: '2024-06-01T12:00:00.000Z' });
    });

    it('applies allowUnsafeExternalContent per mapping over the hooks setting', async () => {
      const engine = await engineWith(
        [
          { id: 'inherit', match: { path: 'a' }, messageTemplate: 'x' },
          { id: 'safe', match: { path: 'b' }, messageTemplate: 'x', allowUnsafeExternalContent: false },
        ],
        { hooks: { allowUnsafeExternalContent: true } },
      );
      expect(actionsOf(await engine.map(request('a', {})))[0]).to.include({ unsafe: true });
      expect(actionsOf(await engine.map(request('b', {})))[0]).to.include({ unsafe: false });
    });

    it('rejects a blank rendered message or sessionKey with invalid_payload, and a foreign key with session_key_not_allowed', async () => {
      const engine = await engineWith([
        { id: 'msg', match: { path: 'msg' }, messageTemplate: '{{missing}}  ' },
        { id: 'key', match: { path: 'key' }, messageTemplate: 'm', sessionKey: '{{missing}}' },
        { id: 'foreign', match: { path: 'foreign' }, messageTemplate: 'm', sessionKey: '{{team}}:1' },
      ]);
      expect((await mapError(engine, request('msg', {}))).message).to.equal('message must not be empty or blank');
      expect((await mapError(engine, request('key', {}))).message).to.equal('sessionKey must not be empty or blank');
      const foreign = await mapError(engine, request('foreign', { team: 'main' }));
      expect(foreign.code).to.equal('session_key_not_allowed');
    });

    it('turns a JSONata guard trip into transform_failed without payload text', async () => {
      const engine = await engineWith([{ id: 'loop', engine: 'jsonata', messageTemplate: '($f := function($n) { $f($n + 1) }; secret & $f(0))' }]);
      const err = await mapError(engine, request('x', { secret: 'hunter2' }));
      expect(err.code).to.equal('transform_failed');
      expect(err.message).to.equal('mapping "loop": messageTemplate failed');
      expect((err.cause as { code?: string }).code).to.equal('D1012');
    });

    it('evaluates every JSONata field', async () => {
      const engine = await engineWith([
        { id: 'j', engine: 'jsonata', name: '"Orders"', messageTemplate: '"Total " & $sum(items.price)', sessionKey: '"hook:order:" & id', model: 'tier = "gold" ? "smart" : "fast"' },
      ]);
      expect(actionsOf(await engine.map(request('x', { id: 5, tier: 'gold', items: [{ price: 1 }, { price: 2 }] })))[0]).to.include({
        name: 'Orders',
        message: 'Total 3',
        sessionKey: 'hook:order:5',
        model: 'smart',
      });
    });
  });

  describe('forEach', () => {
    const mapping: MappingInput = { id: 'mail', forEach: 'messages', messageTemplate: '{{index}}: {{subject}} ({{payload.account}}/{{item.id}})', sessionKey: 'hook:email:{{id}}' };

    it('makes one action per item with the item fields at the top level', async () => {
      const engine = await engineWith([mapping]);
      const actions = actionsOf(await engine.map(request('email', { account: 'me', messages: [{ id: 'a', subject: 'hi' }, { id: 'b', subject: 'yo' }] })));
      expect(actions.map((a) => (a.kind === 'agent' ? [a.message, a.sessionKey] : []))).to.deep.equal([
        ['0: hi (me/a)', 'hook:email:a'],
        ['1: yo (me/b)', 'hook:email:b'],
      ]);
    });

    it('acts on at most maxFanOut items and reports how many were dropped', async () => {
      const engine = await engineWith([mapping], { hooks: { maxFanOut: 2 } });
      const messages = [1, 2, 3, 4, 5].map((n) => ({ id: `m${n}`, subject: `s${n}` }));
      const result = await engine.map(request('email', { messages }));
      expect(actionsOf(result)).to.have.length(2);
      expect(result).to.include({ dropped: 3 });
      const exact = await engine.map(request('email', { messages: messages.slice(0, 2) }));
      expect(exact).to.not.have.property('dropped');
    });

    it('skips a missing, empty or non-array field', async () => {
      const engine = await engineWith([mapping]);
      for (const payload of [{}, { messages: [] }, { messages: 'x' }, { messages: { 0: {} } }]) {
        expect(await engine.map(request('email', payload))).to.deep.equal({ type: 'skipped', mappingId: 'mail' });
      }
    });

    it('names the failing item', async () => {
      const engine = await engineWith([{ id: 'mail', forEach: 'messages', messageTemplate: '{{subject}}', sessionKey: '{{key}}' }]);
      const bad = await mapError(engine, request('email', { messages: [{ subject: 's', key: 'hook:1' }, { subject: ' ', key: 'hook:2' }] }));
      expect(bad.code).to.equal('invalid_payload');
      expect(bad.message).to.equal('item 1: message must not be empty or blank');
      const foreign = await mapError(engine, request('email', { messages: [{ subject: 's', key: 'main' }] }));
      expect(foreign.code).to.equal('session_key_not_allowed');
      expect(foreign.message).to.match(/^item 0: sessionKey must start with one of: hook:$/);
    });

    it('renders non-object items through item', async () => {
      const engine = await engineWith([{ forEach: 'tags', action: 'wake', textTemplate: 'tag {{item}} #{{index}}' }]);
      expect(actionsOf(await engine.map(request('x', { tags: ['a', 'b'] }))).map((a) => (a.kind === 'wake' ? a.text : ''))).to.deep.equal(['tag a #0', 'tag b #1']);
    });
  });

  describe('transforms', () => {
    it('calls TypeScript, .mts, CommonJS and JavaScript transforms with the request', async () => {
      const engine = await engineWith([
        { id: 'ts', match: { path: 'ts' }, transform: { module: 'echo.ts' } },
        { id: 'mts', match: { path: 'mts' }, action: 'wake', transform: { module: 'named.mts' } },
        { id: 'cjs', match: { path: 'cjs' }, transform: { module: 'commonjs.cjs' } },
      ]);
      expect(actionsOf(await engine.map(request('ts', { x: 1 })))[0]).to.include({
        message: 'echo 1 @ ts /hooks/ts 2024-06-01T12:00:00.000Z',
        name: 'Echo',
      });
      expect(actionsOf(await engine.map(request('mts', { x: 2 })))[0]).to.include({ kind: 'wake', text: 'named 2' });
      expect(actionsOf(await engine.map(request('cjs', { x: 3 })))[0]).to.include({ message: 'cjs 3' });
    });

    it('overrides template fields; undefined keeps the template result; null skips', async () => {
      const engine = await engineWith([
        { id: 'keep', match: { path: 'keep' }, messageTemplate: 'from template', transform: { module: 'steps.mjs', export: 'keep' } },
        { id: 'skip', match: { path: 'skip' }, messageTemplate: 'from template', transform: { module: 'steps.mjs', export: 'skip' } },
        { id: 'all', match: { path: 'all' }, messageTemplate: 'from template', name: 'N', transform: { module: 'steps.mjs', export: 'everything' } },
        { id: 'clear', match: { path: 'clear' }, messageTemplate: 'm', name: 'Named', model: 'x', transform: { module: 'steps.mjs', export: 'clearModel' } },
      ], { agent: { aliases: { fast: 'vendor/fast' } } });
      expect(actionsOf(await engine.map(request('keep', {})))[0]).to.include({ message: 'from template' });
      expect(await engine.map(request('skip', {}))).to.deep.equal({ type: 'skipped', mappingId: 'skip' });
      expect(actionsOf(await engine.map(request('all', {})))[0]).to.deep.equal({
        kind: 'agent',
        message: 'from transform',
        name: 'T',
        sessionKey: 'hook:t',
        wakeMode: 'next-heartbeat',
        deliver: true,
        provider: 'slack',
        to: 'C1',
        model: 'vendor/fast',
        thinking: 'high',
        timeoutSeconds: 30,
        source: 'mapping:all',
        unsafe: false,
      });
      const cleared = actionsOf(await engine.map(request('clear', {})))[0];
      expect(cleared).to.include({ name: 'Named' }).and.not.have.property('model');
    });

    it('lets kind switch the action', async () => {
      const engine = await engineWith([{ id: 'sw', messageTemplate: 'agent text', transform: { module: 'steps.mjs', export: 'toWake' } }]);
      expect(actionsOf(await engine.map(request('x', { who: 'bob' })))).to.deep.equal([
        { kind: 'wake', text: 'woke by bob', mode: 'next-heartbeat', source: 'mapping:sw', unsafe: false },
      ]);
    });

    it('validates what transforms return like any body', async () => {
      const engine = await engineWith([
        { id: 'kind', match: { path: 'kind' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'badKind' } },
        { id: 'key', match: { path: 'key' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'evilSession' } },
        { id: 'conflict', match: { path: 'conflict' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'conflict' } },
        { id: 'chan', match: { path: 'chan' }, messageTemplate: 'm', provider: 'slack', transform: { module: 'steps.mjs', export: 'channel' } },
      ]);
      expect((await mapError(engine, request('kind', {}))).message).to.equal('kind must be one of: wake, agent');
      expect((await mapError(engine, request('key', {}))).code).to.equal('session_key_not_allowed');
      expect((await mapError(engine, request('conflict', {}))).message).to.match(/provider and channel disagree/);
      expect(actionsOf(await engine.map(request('chan', {})))[0]).to.include({ provider: 'telegram', to: '42', deliver: true });
    });

    it('turns throws, timeouts and non-object results into transform_failed without payload text', async () => {
      const engine = await engineWith(
        [
          { id: 'boom', match: { path: 'boom' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'boom' } },
          { id: 'slow', match: { path: 'slow' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'slow' } },
          { id: 'text', match: { path: 'text' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'text' } },
          { id: 'list', match: { path: 'list' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'list' } },
        ],
        { hooks: { transformTimeoutMs: 50 } },
      );
      for (const id of ['boom', 'slow', 'text', 'list']) {
        const err = await mapError(engine, request(id, { secret: 'hunter2' }));
        expect(err.code, id).to.equal('transform_failed');
        expect(err.message).to.equal(`mapping "${id}": transform failed`);
        expect(err.cause).to.be.instanceOf(Error);
      }
    });

    it('runs per item under forEach; null skips that item only', async () => {
      const engine = await engineWith([{ id: 'items', forEach: 'items', transform: { module: 'steps.mjs', export: 'perItem' } }]);
      const result = await engine.map(request('x', { items: [{ id: 'a' }, { id: 'b', skip: true }, { id: 'c' }] }));
      expect(actionsOf(result).map((a) => (a.kind === 'agent' ? a.sessionKey : ''))).to.deep.equal(['hook:item:a', 'hook:item:c']);
      expect(await engine.map(request('x', { items: [{ id: 'b', skip: true }] }))).to.deep.equal({ type: 'skipped', mappingId: 'items' });
    });
  });

  describe('direct bodies', () => {
    it('validates /wake and /agent with the hooks-level unsafe setting', async () => {
      const engine = await engineWith([], { hooks: { allowUnsafeExternalContent: true } });
      expect(engine.wake({ text: ' hi ' })).to.deep.equal({ kind: 'wake', text: 'hi', mode: 'now', source: 'wake', unsafe: true });
      expect(engine.agent({ message: 'm' })).to.include({ source: 'agent', unsafe: true, deliver: true, sessionKey: 'hook:uuid-1' });
      expect(() => engine.agent({ message: ' ' })).to.throw(HookError, /message must not be empty or blank/);
    });
  });
});
