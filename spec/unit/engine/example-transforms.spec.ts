import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import type { HookRequest } from '../../../src/engine/compile-mapping.js';
import { createEngine } from '../../../src/engine/engine.js';
import { makeConfig } from './make-config.js';
import { map, type Mapped } from './engine-harness.js';

const EXAMPLES = fileURLToPath(new URL('../../../transforms/', import.meta.url));

function request(name: string, payload: Record<string, unknown>, headers: Record<string, string> = {}): HookRequest {
  return { name, payload, headers, query: {}, url: `/hooks/${name}`, now: new Date('2024-01-01T00:00:00Z') };
}

function firstAction(result: Mapped) {
  expect(result.type).to.equal('actions');
  return (result as Extract<Mapped, { type: 'actions' }>).actions[0];
}

describe('transforms/ (the shipped examples)', () => {
  const engine = createEngine(
    makeConfig({
      hooks: {
        transformsDir: EXAMPLES,
        mappings: [
          { id: 'github-push', match: { path: 'github' }, transform: { module: 'github-push.ts' } },
          { id: 'uptime', match: { path: 'uptime' }, action: 'wake', textTemplate: '{{monitor.name}}: {{heartbeat.msg}}', transform: { module: 'uptime-alert.mjs' } },
        ],
      },
    }),
  );

  it('github-push.ts summarises a push in one agent turn per repository', async () => {
    const push = {
      ref: 'refs/heads/main',
      compare: 'https://github.com/a/b/compare/1...2',
      repository: { id: 42, full_name: 'a/b' },
      pusher: { name: 'ann' },
      commits: [
        { id: '0123456789', message: 'Fix the parser\n\nLong body', author: { name: 'Ann' } },
        { id: 'abcdef0123', message: 'Add docs', author: { name: 'Bob' } },
      ],
    };
    const action = firstAction(await map(await engine, request('github', push, { 'x-github-event': 'push' })));
    expect(action).to.include({ kind: 'agent', name: 'GitHub', sessionKey: 'hook:github:42', source: 'mapping:github-push' });
    expect(action.kind === 'agent' && action.message).to.equal(
      'Push to a/b (main) by ann: 2 commits\n- 0123456 Fix the parser (Ann)\n- abcdef0 Add docs (Bob)\nCompare: https://github.com/a/b/compare/1...2',
    );
  });

  it('github-push.ts skips pings and branch deletions', async () => {
    const e = await engine;
    expect((await map(e, request('github', { zen: 'hi' }, { 'x-github-event': 'ping' }))).type).to.equal('skipped');
    expect((await map(e, request('github', { deleted: true, commits: [] }, { 'x-github-event': 'push' }))).type).to.equal('skipped');
  });

  it('uptime-alert.mjs keeps the wake template when up and switches to a delivered agent turn when down', async () => {
    const e = await engine;
    const up = firstAction(await map(e, request('uptime', { monitor: { name: 'API' }, heartbeat: { status: 1, msg: 'OK' } })));
    expect(up).to.deep.include({ kind: 'wake', text: 'API: OK', mode: 'next-heartbeat' });
    const down = firstAction(await map(e, request('uptime', { monitor: { name: 'API', url: 'https://api' }, heartbeat: { status: 0, msg: 'timeout' } })));
    expect(down).to.include({ kind: 'agent', name: 'Uptime', deliver: true, provider: 'last' });
    expect((await map(e, request('uptime', { msg: 'test' }))).type).to.equal('skipped');
  });
});
