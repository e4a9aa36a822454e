import { execFile } from 'node:child_process';
import { expect } from 'chai';
import { BIN, ROOT } from '../../support/gateway.js';

/**
 * The fixtures shipped for the example config (fixtures/ at the repository root) pass, through
 * the real CLI as an integrator's CI would run it (docs/testing-mappings.md).
 */
describe('cli: the shipped fixtures pass against hookrelay.example.yaml', function () {
  this.timeout(60000);

  it('hookrelay test --fixtures fixtures --config hookrelay.example.yaml exits 0', async () => {
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(BIN, ['test', '--fixtures', 'fixtures', '--config', 'hookrelay.example.yaml'], { cwd: ROOT, timeout: 60000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });
    expect(r.stdout, r.stderr).to.match(/^\d+ passed, 0 failed, 1 skipped$/m);
    expect(r.code, r.stdout).to.equal(0);
  });
});
