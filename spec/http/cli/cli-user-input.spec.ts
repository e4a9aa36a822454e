import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { tmpDir } from '../../support/gateway.js';

/** Runs the CLI's `main` in this process with the environment minus `unset`. */
const run = (args: string[], unset: string[] = []) => runCli(args, Object.fromEntries(unset.map((name) => [name, undefined])));

describe('cli: the dry run says when a live request would need the token its fixture stands in for', function () {
  this.timeout(60000);

  it('a signed GitHub ping reaching a catch-all without auth: signature: 204 here, 401 live — a warning line under the fixture, and in test NAME', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(file, JSON.stringify({
      hooks: {
        token: 't',
        mappings: [
          { id: 'github-push', match: { path: 'github', headers: { 'x-github-event': 'push' } }, verify: { scheme: 'github', secret: 's' }, auth: 'signature', action: 'wake', textTemplate: 'push' },
          { id: 'github-other', match: { path: 'github' }, action: 'respond', respond: { status: 204 } },
          { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note' },
        ],
      },
    }));
    const folder = path.join(dir, 'fixtures');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'ping.json'), JSON.stringify({ name: 'ping', request: { path: 'github', headers: { 'x-github-event': 'ping' }, body: { zen: 'hi' } }, sign: true, expect: { status: 204 } }));
    fs.writeFileSync(path.join(folder, 'push.json'), JSON.stringify({ name: 'push', request: { path: 'github', headers: { 'x-github-event': 'push' }, body: {} }, sign: true, expect: { status: 200 } }));
    fs.writeFileSync(path.join(folder, 'note.json'), JSON.stringify({ name: 'note', request: { path: 'note', body: {} }, expect: { status: 200 } }));
    const warning = 'mapping "github-other" needs the hooks token, but a sender that signs for /hooks/github (as mapping "github-push", with auth: signature, expects) sends none: live, this request gets 401 unauthorized; give "github-other" verify and auth: signature too';
    const t = await run(['test', '--fixtures', folder, '--config', file]);
    expect(t.stdout).to.equal(`✓ note\n✓ ping\n  warning: ${warning}\n✓ push\n3 passed, 0 failed\n`);
    expect(t.code).to.equal(0);
    fs.writeFileSync(path.join(dir, 'ping-body.json'), '{"zen":"hi"}');
    const one = await run(['test', 'github', '--payload', path.join(dir, 'ping-body.json'), '--header', 'x-github-event=ping', '--config', file]);
    expect(one.code, one.stderr).to.equal(0);
    expect(JSON.parse(one.stdout)).to.deep.equal({ mapping: 'github-other', status: 204, response: { status: 204 }, warnings: [warning] });
  });
});
