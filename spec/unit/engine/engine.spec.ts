import { expect } from 'chai';
import { createEngine } from '../../../src/engine/engine.js';
import { HookError } from '../../../src/errors.js';
import { actionsOf, configProblems, direct, engineWith, idOf, map, mapError, NOW, request } from './engine-harness.js';
import { makeConfig, type MappingInput } from './make-config.js';

describe('engine/engine', () => {
  describe('createEngine', () => {
    it('lists mapping ids in order', async () => {
      const engine = await engineWith([{ id: 'a', messageTemplate: 'x' }, { id: 'b', forEach: 'items', messageTemplate: 'y' }, { messageTemplate: 'z' }]);
      expect(engine.mappings).to.deep.equal(['a', 'b', 'mapping-3']);
    });

    it('collects every problem with its YAML path into one ConfigError', async () => {
      // What needs compiling or loading; the static rules (required templates, forEach, the
      // text of transform.module) are the loader's, in spec/unit/config/load.spec.ts.
      const problems = await configProblems([
        { messageTemplate: '{{#if}}' },
        { engine: 'jsonata', messageTemplate: 'a.(' },
        { messageTemplate: 'ok', name: '{{shout x}}', sessionKey: '{{> p}}' },
        { transform: { module: 'missing.ts' } },
        { transform: { module: 'echo.ts', export: 'notAFunction' } },
        { transform: { module: 'no-function.mjs' } },
        { messageTemplate: 'ok', schema: { type: 'nonsense' } },
      ]);
      const paths = problems.map((p) => p.slice(0, p.indexOf(': ')));
      expect(paths).to.deep.equal([
        'hooks.mappings[0].messageTemplate',
        'hooks.mappings[1].messageTemplate',
        'hooks.mappings[2].name',
        'hooks.mappings[2].sessionKey',
        'hooks.mappings[3].transform.module',
        'hooks.mappings[4].transform.export',
        'hooks.mappings[5].transform.module',
        'hooks.mappings[6].schema',
      ]);
      expect(problems[5]).to.match(/notAFunction \(number\)/);
      for (const problem of problems) expect(problem).to.not.include('\n');
    });

    it('a block helper misused in a branch no request has taken yet is a config problem at its path', async () => {
      const problems = await configProblems([
        { action: 'wake', textTemplate: 'hi\n{{#if vip}}{{#with}}x{{/with}}{{/if}}' },
        { messageTemplate: '{{#each items}}{{if done "✓"}}{{/each}}' },
      ]);
      expect(problems).to.deep.equal([
        'hooks.mappings[0].textTemplate: #with requires exactly one argument - 2:11',
        'hooks.mappings[1].messageTemplate: #if is a block helper: write {{#if …}}…{{/if}}, not {{if …}} or (if …) - 1:15',
      ]);
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
      expect(idOf(await map(engine, request('github', { source: 'release' })))).to.equal('gh-release');
      expect(idOf(await map(engine, request('github', { source: 'push' })))).to.equal('gh');
      expect(idOf(await map(engine, request('github', {})))).to.equal('gh');
      expect(idOf(await map(engine, request('github', { source: 'stripe' })))).to.equal('gh');
      expect(idOf(await map(engine, request('billing', { source: 'stripe' })))).to.equal('by-source');
      expect(idOf(await map(engine, request('other', { source: 42 })))).to.equal('numbers');
    });

    it('answers no_match when nothing holds', async () => {
      const engine = await engineWith(mappings);
      expect(await map(engine, request('gitlab', { source: 'push' }))).to.deep.equal({ type: 'no_match' });
      expect(await map(engine, request('gitlab', { source: { nested: 'stripe' } }))).to.deep.equal({ type: 'no_match' });
      expect(await map(engine, request('__proto__', {}))).to.deep.equal({ type: 'no_match' });
      expect(await map(await engineWith([]), request('x', {}))).to.deep.equal({ type: 'no_match' });
    });

    it('lets a mapping without path match any name', async () => {
      const engine = await engineWith([{ id: 'gh', match: { path: 'github' }, messageTemplate: 'g' }, { id: 'all', messageTemplate: 'a' }]);
      expect(idOf(await map(engine, request('github', {})))).to.equal('gh');
      expect(idOf(await map(engine, request('anything', {})))).to.equal('all');
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
      const result = await map(engine, 
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
            sessionKeyGiven: true,
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
      expect(actionsOf(await map(engine, request('x', { alert: { level: 2 } })))).to.deep.equal([
        { kind: 'wake', text: 'Alert: {"level":2}', mode: 'next-heartbeat', source: 'mapping:w', unsafe: false },
      ]);
    });

    it('renders now as the time the request came', async () => {
      const engine = await createEngine(makeConfig({ hooks: { mappings: [{ messageTemplate: '{{now}}' }] } }));
      expect(actionsOf(await map(engine, request('x', {})))[0]).to.include({ message: NOW.toISOString() });
    });

    it('applies allowUnsafeExternalContent per mapping over the hooks setting', async () => {
      const engine = await engineWith(
        [
          { id: 'inherit', match: { path: 'a' }, messageTemplate: 'x' },
          { id: 'safe', match: { path: 'b' }, messageTemplate: 'x', allowUnsafeExternalContent: false },
        ],
        { hooks: { allowUnsafeExternalContent: true } },
      );
      expect(actionsOf(await map(engine, request('a', {})))[0]).to.include({ unsafe: true });
      expect(actionsOf(await map(engine, request('b', {})))[0]).to.include({ unsafe: false });
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
      expect(err.message).to.match(/^mapping "loop": messageTemplate failed: too_many_steps: the JSONata of one request would take more than \d+ evaluation steps/);
      expect(err.message).to.not.include('hunter2');
      expect((err.cause as { code?: string }).code).to.equal('too_many_steps');
    });

    it('evaluates every JSONata field', async () => {
      const engine = await engineWith([
        { id: 'j', engine: 'jsonata', name: '"Orders"', messageTemplate: '"Total " & $sum(items.price)', sessionKey: '"hook:order:" & id', model: 'tier = "gold" ? "smart" : "fast"' },
      ]);
      expect(actionsOf(await map(engine, request('x', { id: 5, tier: 'gold', items: [{ price: 1 }, { price: 2 }] })))[0]).to.include({
        name: 'Orders',
        message: 'Total 3',
        sessionKey: 'hook:order:5',
        model: 'smart',
      });
    });
  });

  describe('direct bodies', () => {
    it('validates /wake and /agent with the hooks-level unsafe setting', async () => {
      const engine = await engineWith([], { hooks: { allowUnsafeExternalContent: true } });
      expect(await direct(engine, 'wake', { text: ' hi ' })).to.deep.equal({ kind: 'wake', text: 'hi', mode: 'now', source: 'wake', unsafe: true });
      expect(await direct(engine, 'agent', { message: 'm' })).to.include({ source: 'agent', unsafe: true, deliver: true, sessionKey: 'hook:uuid-1' });
      const err = await direct(engine, 'agent', { message: ' ' }).then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(HookError).with.property('message').that.matches(/message must not be empty or blank/);
    });
  });
});
