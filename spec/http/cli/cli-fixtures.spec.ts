import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { BIN, ROOT, tmpDir } from '../../support/gateway.js';

const run = (args: string[]) => runCli(args);

function bin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const SW_SECRET = `whsec_${Buffer.from('standard webhooks key for fixtures').toString('base64')}`;

/**
 * `hookrelay test --fixtures DIR` (CONTRACT.md §13), the real CLI on a real config: one line
 * per fixture, a readable difference for each failure, the counts, the exit code; signed
 * fixtures for every `verify` scheme, unsigned ones refused as the listener refuses them.
 */
describe('cli: hookrelay test --fixtures', function () {
  this.timeout(60_000);
  const dir = tmpDir();
  const transforms = path.join(dir, 'transforms');
  fs.mkdirSync(transforms);
  fs.writeFileSync(path.join(transforms, 'quiet.mjs'), 'export default function (input) { return input.payload.quiet ? null : { text: `said ${input.payload.say}` }; }\n');
  const config = {
    dataDir: path.join(dir, 'data'),
    hooks: {
      token: 't',
      transformsDir: transforms,
      mappings: [
        { id: 'contact', match: { path: 'contact' }, action: 'agent', messageTemplate: 'from {{name}}: {{message}}', sessionKey: 'hook:c:{{name}}' },
        { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' },
        { id: 'each', match: { path: 'each' }, action: 'wake', forEach: 'items', textTemplate: 'item {{index}} {{v}}' },
        { id: 'quiet', match: { path: 'quiet' }, action: 'wake', textTemplate: 'x', transform: { module: 'quiet.mjs' } },
        { id: 'gh', match: { path: 'github', headers: { 'x-github-event': 'push' } }, action: 'agent', messageTemplate: 'push to {{ref}}', sessionKey: 'hook:gh:{{repository.id}}', verify: { scheme: 'github', secret: 'gh-secret' } },
        { id: 'stripe', match: { path: 'stripe' }, action: 'wake', textTemplate: 'stripe {{type}}', verify: { scheme: 'stripe', secret: 'whsec_stripe' } },
        { id: 'slack', match: { path: 'slack' }, action: 'wake', textTemplate: 'slack {{event.type}}', verify: { scheme: 'slack', secret: 'slack-secret' } },
        { id: 'sw', match: { path: 'sw' }, action: 'wake', textTemplate: 'sw {{type}}', verify: { scheme: 'standard-webhooks', secret: SW_SECRET } },
        { id: 'shop', match: { path: 'shop' }, action: 'wake', textTemplate: 'order {{id}}', verify: { scheme: 'hmac', secret: 'shop-secret', header: 'X-Shopify-Hmac-Sha256', encoding: 'base64' } },
      ],
    },
  };
  const file = path.join(dir, 'hookrelay.json');
  fs.writeFileSync(file, JSON.stringify(config));
  /** A folder of fixture files: name → content (an object as JSON, a string as it is). */
  const folder = (files: Record<string, unknown>) => {
    const d = fs.mkdtempSync(path.join(dir, 'fx-'));
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(d, name), typeof content === 'string' ? content : JSON.stringify(content));
    return d;
  };

  const passing = {
    'a-agent.json': { name: 'contact form', request: { path: 'contact', body: { name: 'ada', message: 'hi' } }, expect: { status: 202, action: { action: 'agent', sessionKey: 'hook:c:ada', message: 'from ada: hi' } } },
    'b-wake.yaml': 'name: a note\nrequest: {path: note, body: {n: 1}}\nexpect: {status: 200, action: {mapping: note, action: wake, text: note 1, mode: next-heartbeat}}\n',
    'c-each.yml': 'name: each item\nrequest: {path: each, body: {items: [{v: a}, {v: b}]}}\nexpect:\n  actions:\n    - {mapping: each, text: item 0 a}\n    - {text: item 1 b}\n',
    'd-skipped-by-mapping.json': { name: 'a quiet one is skipped', request: { path: 'quiet', body: { quiet: true } }, expect: { status: 204, skipped: true } },
    'e-no-mapping.json': { name: 'nothing takes /hooks/nope', request: { path: 'nope', body: {} }, expect: { status: 404, response: { ok: false, error: { code: 'no_mapping' } } } },
    'f-form.json': { name: 'form data', request: { path: 'contact', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=bo&message=yo' }, expect: { action: { message: 'from bo: yo' } } },
    'g-later.yaml': 'name: not yet\nskip: waiting for the ci mapping\nrequest: {path: ci, body: {}}\nexpect: {status: 200}\n',
  };
  const signed = {
    'github.json': { name: 'github push, signed', sign: true, request: { path: 'github', headers: { 'X-GitHub-Event': 'push' }, body: { ref: 'main', repository: { id: 7 } } }, expect: { status: 202, action: { sessionKey: 'hook:gh:7', message: 'push to main' } } },
    'stripe.json': { name: 'stripe, signed', sign: true, request: { path: 'stripe', body: { type: 'invoice.paid' } }, expect: { status: 200, action: { text: 'stripe invoice.paid' } } },
    'slack.json': { name: 'slack, signed', sign: true, request: { path: 'slack', body: { event: { type: 'message' } } }, expect: { action: { text: 'slack message' } } },
    'sw.json': { name: 'standard webhooks, signed', sign: true, request: { path: 'sw', headers: { 'webhook-id': 'msg_1' }, body: { type: 'user.created' } }, expect: { action: { text: 'sw user.created' } } },
    'shop.json': { name: 'shopify hmac, signed', sign: true, request: { path: 'shop', body: { id: 12 } }, expect: { action: { text: 'order 12' } } },
  };

  it('all pass, skipped ones marked: one line each, then the counts, exit 0', async () => {
    const r = await bin(['test', '--fixtures', folder({ ...passing, ...signed }), '--config', file]);
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    expect(r.stdout.split('\n')).to.deep.equal([
      '✓ contact form', '✓ a note', '✓ each item', '✓ a quiet one is skipped', '✓ nothing takes /hooks/nope', '✓ form data',
      '- not yet (skipped: waiting for the ci mapping)',
      '✓ github push, signed', '✓ shopify hmac, signed', '✓ slack, signed', '✓ stripe, signed', '✓ standard webhooks, signed',
      '11 passed, 0 failed, 1 skipped', '',
    ]);
  });

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
