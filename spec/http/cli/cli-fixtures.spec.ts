import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { fixturesConfig } from '../../support/cli-fixtures.js';

const run = (args: string[]) => runCli(args);

/**
 * `hookrelay test --fixtures DIR` (CONTRACT.md §13), the real CLI on a real config: one line
 * per fixture, a readable difference for each failure, the counts, the exit code; signed
 * fixtures for every `verify` scheme, unsigned ones refused as the listener refuses them.
 */
describe('cli: hookrelay test --fixtures', function () {
  this.timeout(60_000);
  const { dir, file, folder, passing, signed } = fixturesConfig();

  it('an unsigned fixture for a verifying mapping is refused like the real request: 401 invalid_signature', async () => {
    const unsigned = Object.fromEntries(Object.entries(signed).map(([name, f]) => [name, { ...f, sign: undefined }]));
    const r = await run(['test', '--fixtures', folder(unsigned), '--config', file]);
    expect(r.code).to.equal(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).to.have.length(6);
    for (const line of lines.slice(0, 5)) expect(line).to.match(/^✗ .+ — expected (status 20[02], got 401 \(|an action, got 401 )invalid_signature(: | \()POST \/hooks\/\w+ needs a valid signature: /);
    expect(lines[5]).to.equal('0 passed, 5 failed');
    const refused = { 'r.json': { name: 'refused', request: { path: 'github', headers: { 'x-github-event': 'push' }, body: {} }, expect: { status: 401, response: { error: { code: 'invalid_signature' } } } } };
    expect((await run(['test', '--fixtures', folder(refused), '--config', file])).stdout).to.equal('✓ refused\n1 passed, 0 failed\n');
  });

  it('deliberately failing and invalid fixtures: the readable difference or what is wrong with the file, exit 1', async () => {
    const failing = {
      ...passing,
      'h-wrong-session.json': { name: 'wrong session', request: { path: 'contact', body: { name: 'ada', message: 'hi' } }, expect: { action: { sessionKey: 'hook:c:bo' } } },
      'i-wrong-count.json': { name: 'wrong count', request: { path: 'each', body: { items: [{}, {}, {}] } }, expect: { actions: [{}, {}] } },
      'j-wrong-status.json': { name: 'wrong status', request: { path: 'note', body: { n: 2 } }, expect: { status: 202 } },
      'k-not-skipped.json': { name: 'not skipped', request: { path: 'quiet', body: { say: 'hi' } }, expect: { skipped: true } },
      'l-typo.json': { name: 'typo', request: { path: 'note', body: {} }, expect: { stauts: 200 } },
      'm-no-expect.yaml': 'request: {path: note, body: {}}\nexpect: {}\n',
      'n-broken.json': '{"request": ',
      'o-sign-without-verify.json': { name: 'sign without verify', sign: true, request: { path: 'note', body: {} }, expect: { status: 200 } },
      'p-builtin.json': { name: 'builtin', request: { path: 'wake', body: { text: 'x' } }, expect: { status: 200 } },
      'q-refused-not-skipped.json': { name: 'bad body', request: { path: 'note', headers: { 'content-type': 'application/json' }, body: '{"n": ' }, expect: { action: { text: 'note 1' } } },
    };
    const d = folder(failing);
    const r = await run(['test', '--fixtures', d, '--config', file]);
    expect(r.code).to.equal(1);
    const lines = r.stdout.split('\n');
    expect(lines.slice(7)).to.deep.equal([
      '✗ wrong session — expected action.sessionKey "hook:c:bo", got "hook:c:ada"',
      '✗ wrong count — expected 2 actions, got 3',
      '✗ wrong status — expected status 202, got 200',
      '✗ not skipped — expected skipped, got one action "wake" (200)',
      `✗ l-typo.json — invalid fixture file ${path.join(d, 'l-typo.json')}: expect.stauts: unknown key "stauts"; did you mean "status"?`,
      `✗ m-no-expect.yaml — invalid fixture file ${path.join(d, 'm-no-expect.yaml')}: expect: must name at least one of status, action, actions, skipped, response`,
      `✗ n-broken.json — invalid fixture file ${path.join(d, 'n-broken.json')}: cannot be read: Unexpected end of JSON input`,
      `✗ sign without verify — invalid fixture file ${path.join(d, 'o-sign-without-verify.json')}: sign: true, but no mapping for POST /hooks/note has verify: remove sign, or add verify to the mapping`,
      `✗ builtin — invalid fixture file ${path.join(d, 'p-builtin.json')}: request.path: wake is a built-in endpoint (/hooks/wake), not a mapping: give the NAME of a mapping's match.path`,
      '✗ bad body — expected an action, got 400 invalid_json (the body is not valid JSON)',
      '6 passed, 10 failed, 1 skipped',
      '',
    ]);
  });

  it('refuses a missing or empty folder, and NAME or --payload given with --fixtures', async () => {
    const missing = await run(['test', '--fixtures', path.join(dir, 'absent'), '--config', file]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include(`--fixtures ${path.join(dir, 'absent')}: no such folder`);
    const empty = await run(['test', '--fixtures', folder({ 'readme.txt': 'not a fixture' }), '--config', file]);
    expect(empty.code).to.equal(1);
    expect(empty.stderr).to.include('no fixture files (*.json, *.yaml, *.yml) in it');
    const both = await run(['test', 'note', '--fixtures', dir, '--config', file]);
    expect(both.code).to.equal(1);
    expect(both.stderr).to.include('give no NAME, --payload, --header or --query with it');
    const neither = await run(['test', '--config', file]);
    expect(neither.code).to.equal(1);
    expect(neither.stderr).to.include('give the NAME of a hook (or --fixtures DIR)');
  });
});
