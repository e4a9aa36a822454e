import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { BIN, ROOT, tmpDir } from '../../support/gateway.js';

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, timeout: 30000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

// The docs show one line an action.
describe('cli: test prints one line of JSON (--pretty indents)', function () {
  this.timeout(30000);

  it('one line, as JSON.stringify writes it, whatever the terminal; --pretty: two-space indent', async () => {
    const dir = tmpDir();
    const config = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(config, JSON.stringify({ hooks: { token: 't', mappings: [
      { id: 'ci', match: { path: 'ci' }, action: 'wake', textTemplate: 'Build {{build.id}} of {{repo}} is {{build.status}}' },
    ] } }));
    const payload = path.join(dir, 'ci.json');
    fs.writeFileSync(payload, '{"repo":"acme/api","build":{"id":981,"status":"red"}}');
    const want = { mapping: 'ci', status: 200, action: 'wake', text: 'Build 981 of acme/api is red', mode: 'now' };
    const [plain, pretty] = await Promise.all([
      run(['test', 'ci', '--payload', payload, '--config', config]),
      run(['test', 'ci', '--payload', payload, '--config', config, '--pretty']),
    ]);
    expect(plain.code, plain.stderr).to.equal(0);
    expect(plain.stdout).to.equal(`${JSON.stringify(want)}\n`);
    expect(pretty.stdout).to.equal(`${JSON.stringify(want, null, 2)}\n`);
  });
});
