import { execFile } from 'node:child_process';
import { expect } from 'chai';
import { fixturesConfig } from '../../support/cli-fixtures.js';
import { BIN, ROOT } from '../../support/gateway.js';

function bin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/**
 * `hookrelay test --fixtures DIR` (CONTRACT.md §13), the real CLI on a real config: one line
 * per fixture, a readable difference for each failure, the counts, the exit code; signed
 * fixtures for every `verify` scheme, unsigned ones refused as the listener refuses them.
 */
describe('cli: hookrelay test --fixtures', function () {
  this.timeout(60_000);
  const { file, folder, passing, signed } = fixturesConfig();

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
});
