import { expect } from 'chai';
import { actionsOf, engineWith, map, mapError, request } from './engine-harness.js';
import type { MappingInput } from './make-config.js';

describe('engine/engine: forEach and transforms', () => {
  describe('forEach', () => {
    const mapping: MappingInput = { id: 'mail', forEach: 'messages', messageTemplate: '{{index}}: {{subject}} ({{payload.account}}/{{item.id}})', sessionKey: 'hook:email:{{id}}' };

    it('makes one action per item with the item fields at the top level', async () => {
      const engine = await engineWith([mapping]);
      const actions = actionsOf(await map(engine, request('email', { account: 'me', messages: [{ id: 'a', subject: 'hi' }, { id: 'b', subject: 'yo' }] })));
      expect(actions.map((a) => (a.kind === 'agent' ? [a.message, a.sessionKey] : []))).to.deep.equal([
        ['0: hi (me/a)', 'hook:email:a'],
        ['1: yo (me/b)', 'hook:email:b'],
      ]);
    });

    it('acts on at most maxFanOut items and reports how many were dropped', async () => {
      const engine = await engineWith([mapping], { hooks: { maxFanOut: 2 } });
      const messages = [1, 2, 3, 4, 5].map((n) => ({ id: `m${n}`, subject: `s${n}` }));
      const result = await map(engine, request('email', { messages }));
      expect(actionsOf(result)).to.have.length(2);
      expect(result).to.include({ dropped: 3 });
      const exact = await map(engine, request('email', { messages: messages.slice(0, 2) }));
      expect(exact).to.not.have.property('dropped');
    });

    it('skips a missing, null or empty field', async () => {
      const engine = await engineWith([mapping]);
      for (const payload of [{}, { messages: null }, { messages: [] }]) {
        expect(await map(engine, request('email', payload))).to.deep.equal({ type: 'skipped', mappingId: 'mail' });
      }
    });

    it('refuses a field that is there but not an array: 400 invalid_payload naming it (a 204 would hide the mistake)', async () => {
      const engine = await engineWith([mapping]);
      for (const messages of ['x', { 0: {} }, 3, true]) {
        const err = await mapError(engine, request('email', { messages }));
        expect(err.code, JSON.stringify(messages)).to.equal('invalid_payload');
        expect(err.message).to.equal("payload/messages: must be an array (the mapping's forEach)");
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

    it('names the item that failed first while another was still rendering, and leaves the other\'s later failure handled', async () => {
      // `$sum` of a string is refused by JSONata: item 1 fails in its first field, item 0 in its second, later.
      const engine = await engineWith([{ id: 'mail', engine: 'jsonata', forEach: 'messages', messageTemplate: '$string($sum(m))', sessionKey: '"hook:" & $string($sum(n))' }]);
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const bad = await mapError(engine, request('email', { messages: [{ m: 1, n: 'x' }, { m: 'x', n: 1 }] }));
        expect(bad.code).to.equal('transform_failed');
        expect(bad.message).to.match(/^item 1: .*messageTemplate/);
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(unhandled).to.deep.equal([]);
        const ok = actionsOf(await map(engine, request('email', { messages: [{ m: [1, 2], n: [1, 2] }, { m: 3, n: 3 }] })));
        expect(ok.map((a) => (a.kind === 'agent' ? [a.message, a.sessionKey] : []))).to.deep.equal([['3', 'hook:3'], ['3', 'hook:3']]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });

    it('renders non-object items through item', async () => {
      const engine = await engineWith([{ forEach: 'tags', action: 'wake', textTemplate: 'tag {{item}} #{{index}}' }]);
      expect(actionsOf(await map(engine, request('x', { tags: ['a', 'b'] }))).map((a) => (a.kind === 'wake' ? a.text : ''))).to.deep.equal(['tag a #0', 'tag b #1']);
    });
  });

  describe('transforms', () => {
    it('calls TypeScript, .mts, CommonJS and JavaScript transforms with the request', async () => {
      const engine = await engineWith([
        { id: 'ts', match: { path: 'ts' }, transform: { module: 'echo.ts' } },
        { id: 'mts', match: { path: 'mts' }, action: 'wake', transform: { module: 'named.mts' } },
        { id: 'cjs', match: { path: 'cjs' }, transform: { module: 'commonjs.cjs' } },
      ]);
      expect(actionsOf(await map(engine, request('ts', { x: 1 })))[0]).to.include({
        message: 'echo 1 @ ts /hooks/ts 2024-06-01T12:00:00.000Z',
        name: 'Echo',
      });
      expect(actionsOf(await map(engine, request('mts', { x: 2 })))[0]).to.include({ kind: 'wake', text: 'named 2' });
      expect(actionsOf(await map(engine, request('cjs', { x: 3 })))[0]).to.include({ message: 'cjs 3' });
    });

    it('overrides template fields; undefined keeps the template result; null skips', async () => {
      const engine = await engineWith([
        { id: 'keep', match: { path: 'keep' }, messageTemplate: 'from template', transform: { module: 'steps.mjs', export: 'keep' } },
        { id: 'skip', match: { path: 'skip' }, messageTemplate: 'from template', transform: { module: 'steps.mjs', export: 'skip' } },
        { id: 'all', match: { path: 'all' }, messageTemplate: 'from template', name: 'N', transform: { module: 'steps.mjs', export: 'everything' } },
        { id: 'clear', match: { path: 'clear' }, messageTemplate: 'm', name: 'Named', model: 'x', transform: { module: 'steps.mjs', export: 'clearModel' } },
      ], { agent: { aliases: { fast: 'vendor/fast' } } });
      expect(actionsOf(await map(engine, request('keep', {})))[0]).to.include({ message: 'from template' });
      expect(await map(engine, request('skip', {}))).to.deep.equal({ type: 'skipped', mappingId: 'skip' });
      expect(actionsOf(await map(engine, request('all', {})))[0]).to.deep.equal({
        kind: 'agent',
        message: 'from transform',
        name: 'T',
        sessionKey: 'hook:t',
        sessionKeyGiven: true,
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
      const cleared = actionsOf(await map(engine, request('clear', {})))[0];
      expect(cleared).to.include({ name: 'Named' }).and.not.have.property('model');
    });

    it('lets kind switch the action', async () => {
      const engine = await engineWith([{ id: 'sw', messageTemplate: 'agent text', transform: { module: 'steps.mjs', export: 'toWake' } }]);
      expect(actionsOf(await map(engine, request('x', { who: 'bob' })))).to.deep.equal([
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
      expect(actionsOf(await map(engine, request('chan', {})))[0]).to.include({ provider: 'telegram', to: '42', deliver: true });
    });

    it('turns throws, timeouts and non-object results into transform_failed without payload text', async () => {
      const engine = await engineWith(
        [
          { id: 'boom', match: { path: 'boom' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'boom' } },
          { id: 'slow', match: { path: 'slow' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'slow' } },
          { id: 'text', match: { path: 'text' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'text' } },
          { id: 'list', match: { path: 'list' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'list' } },
          { id: 'number', match: { path: 'number' }, messageTemplate: 'm', transform: { module: 'steps.mjs', export: 'number' } },
        ],
        { hooks: { transformTimeoutMs: 50 } },
      );
      for (const id of ['boom', 'slow', 'text', 'list', 'number']) {
        const err = await mapError(engine, request(id, { secret: 'hunter2' }));
        expect(err.code, id).to.equal('transform_failed');
        expect(err.message).to.match(new RegExp(`^mapping "${id}": transform failed: \\w+: `));
        expect(err.message).to.not.include('hunter2');
        expect(err.failure).to.include({ mappingId: id, step: 'transform' });
        expect(err.cause).to.be.instanceOf(Error);
        if (id === 'text' || id === 'list' || id === 'number') expect((err.cause as Error).message).to.match(/expected an object, null or undefined$/);
      }
    });

    it('runs per item under forEach; null skips that item only', async () => {
      const engine = await engineWith([{ id: 'items', forEach: 'items', transform: { module: 'steps.mjs', export: 'perItem' } }]);
      const result = await map(engine, request('x', { items: [{ id: 'a' }, { id: 'b', skip: true }, { id: 'c' }] }));
      expect(actionsOf(result).map((a) => (a.kind === 'agent' ? a.sessionKey : ''))).to.deep.equal(['hook:item:a', 'hook:item:c']);
      expect(await map(engine, request('x', { items: [{ id: 'b', skip: true }] }))).to.deep.equal({ type: 'skipped', mappingId: 'items' });
    });
  });

});
