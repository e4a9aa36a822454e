import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { tmpDir } from '../../support/gateway.js';
import { runCli, writeConfig } from '../../support/cli.js';

describe('cli: hookrelay test --explain (why each mapping on the path did or did not match)', function () {
  this.timeout(60000);
  const dir = tmpDir();
  const file = writeConfig(dir, {
    dataDir: path.join(dir, 'data'),
    hooks: {
      token: 't',
      mappings: [
        { id: 'feed', match: { path: 'gh', method: 'GET' }, action: 'respond', respond: { body: 'ok' } },
        { id: 'from-ci', match: { path: 'gh', source: 'ci' }, action: 'wake', textTemplate: 'ci' },
        { id: 'push', match: { path: 'gh', headers: { 'X-GitHub-Event': 'push' } }, action: 'wake', textTemplate: 'push' },
        { id: 'big', match: { path: 'gh', when: 'payload.n > 10' }, action: 'wake', textTemplate: 'big {{n}}' },
        { id: 'throws', match: { path: 'gh', when: '$number("x")' }, action: 'wake', textTemplate: 'never' },
        { id: 'any', match: { path: 'gh' }, action: 'wake', textTemplate: 'any' },
        { id: 'other', match: { path: 'other' }, action: 'wake', textTemplate: 'other' },
      ],
    },
  });
  const payload = (name: string, body: unknown) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, JSON.stringify(body));
    return p;
  };
  const explainLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('  ')).map((l) => l.trim());

  it('names, in match order, the first failed condition of each mapping: method, source, a header, when (false or failed)', async () => {
    const r = await runCli(['test', 'gh', '--payload', payload('n.json', { n: 3, source: 'web' }), '--config', file, '--explain']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.include({ mapping: 'any', text: 'any' });
    expect(r.stderr).to.include('explain: POST /hooks/gh has 6 mappings, in match order:');
    expect(explainLines(r.stderr)).to.deep.equal([
      'feed: method (it takes GET)',
      'from-ci: source (it wants payload.source "ci")',
      'push: header x-github-event (missing or another value)',
      'big: when was false',
      'throws: when failed (D3030: Unable to cast value to a number: …; counted as not matching)',
      'any: matched',
    ]);
  });

  it('a later mapping that matches too is named as shadowed by the one that took the request', async () => {
    const r = await runCli(['test', 'gh', '--payload', payload('big.json', { n: 30, source: 'ci' }), '--config', file, '--explain', '--header', 'X-GitHub-Event=push']);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).mapping).to.equal('from-ci');
    expect(explainLines(r.stderr)).to.deep.equal([
      'feed: method (it takes GET)',
      'from-ci: matched',
      'push: matched too, but "from-ci" comes first',
      'big: matched too, but "from-ci" comes first',
      'throws: when failed (D3030: Unable to cast value to a number: …; counted as not matching)',
      'any: matched too, but "from-ci" comes first',
    ]);
  });

  it('without --explain a match prints only the JSON; a request nothing takes is explained anyway, with the count in the 404 message', async () => {
    const quiet = await runCli(['test', 'gh', '--payload', payload('q.json', { n: 1 }), '--config', file]);
    expect(quiet.code, quiet.stderr).to.equal(0);
    expect(quiet.stderr).to.equal('');
    const narrow = writeConfig(dir, { dataDir: path.join(dir, 'data'), hooks: { token: 't', mappings: [
      { id: 'push', match: { path: 'gh', headers: { 'x-github-event': 'push' } }, action: 'wake', textTemplate: 'push' },
      { id: 'big', match: { path: 'gh', when: 'payload.n > 10' }, action: 'wake', textTemplate: 'big' },
    ] } }, 'narrow.json');
    const none = await runCli(['test', 'gh', '--payload', payload('s.json', { n: 1 }), '--config', narrow]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.include('no mapping matches POST /hooks/gh with this payload: none of the 2 mappings on this path matched');
    expect(explainLines(none.stderr)).to.deep.equal(['push: header x-github-event (missing or another value)', 'big: when was false']);
    const nowhere = await runCli(['test', 'nowhere', '--payload', payload('s.json', { n: 1 }), '--config', narrow]);
    expect(nowhere.code).to.equal(1);
    expect(nowhere.stderr).to.include('no mapping takes this path');
    expect(nowhere.stderr).to.include('explain: no mapping takes POST /hooks/nowhere\n');
  });

  it('--explain on a request a mapping took and then refused (its schema) explains it too', async () => {
    const strict = writeConfig(dir, { dataDir: path.join(dir, 'data'), hooks: { token: 't', mappings: [
      { id: 'typed', match: { path: 'typed' }, schema: { type: 'object', required: ['n'] }, action: 'wake', textTemplate: 'n' },
    ] } }, 'strict.json');
    const r = await runCli(['test', 'typed', '--payload', payload('e.json', {}), '--config', strict, '--explain']);
    expect(r.code).to.equal(1);
    expect(explainLines(r.stderr)).to.deep.equal(['typed: matched']);
    expect(r.stderr).to.include('invalid_payload');
  });
});
