import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { tmpDir } from '../../support/gateway.js';

/** Through the CLI's `main` in this process (spec/process/cli/ runs `check` through the bin as well). */
describe('cli: check lists every problem in one pass (CONTRACT.md §2)', function () {
  this.timeout(30_000);

  for (const [what, text] of [['an empty file', ''], ['a file of comments only', '# nothing here\n'], ['a YAML null (~)', '~\n'], ['a list', '- hooks\n']]) {
    it(`${what} is refused with exit 1 and says what the file must hold`, async () => {
      const file = path.join(tmpDir(), 'hookrelay.yaml');
      fs.writeFileSync(file, text);
      const r = await runCli(['check', '--config', file]);
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.match(/holds no settings|must be a map of keys/);
    });
  }

  it('a typo\'d key, a broken template and a missing transform module together: exit 1, one line each', async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'transforms'));
    const file = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(file, JSON.stringify({ hooks: { token: 't', mappings: [
      { match: { path: 'a' }, messageTemplate: 'ok', sesionKey: 'hook:x' },
      { match: { path: 'b' }, messageTemplate: '{{#if}}' },
      { match: { path: 'c' }, transform: { module: 'missing.ts' } },
    ] } }));
    const r = await runCli(['check', '--config', file]);
    expect(r.code).to.equal(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines.map((l) => l.slice(0, l.indexOf(': ')))).to.deep.equal([
      'hooks.mappings[0].sesionKey',
      'hooks.mappings[1].messageTemplate',
      'hooks.mappings[2].transform.module',
    ]);
    expect(lines[0]).to.include('did you mean "sessionKey"?');
  });
});
