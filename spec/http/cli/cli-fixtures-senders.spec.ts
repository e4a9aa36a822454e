import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli, writeConfig } from '../../support/cli.js';
import { tmpDir } from '../../support/gateway.js';
import { SENDER_CASES } from '../../support/sender-cases.js';

/**
 * `hookrelay test --fixtures` signs a `sign: true` fixture for every sender of the catalog
 * (CONTRACT.md §15) as the listener verifies it, the body included where the signature or its
 * timestamp lives there (Mailgun, Linear); without `sign` the same fixture is refused.
 */
describe('cli: hookrelay test --fixtures, sign: true for every sender scheme', function () {
  this.timeout(60_000);
  const dir = tmpDir();
  const mappings = SENDER_CASES.map((c) => ({ id: c.scheme, match: { path: c.scheme }, auth: 'signature', verify: c.verify, action: 'wake', textTemplate: `${c.scheme} event` }));
  const file = writeConfig(dir, { dataDir: path.join(dir, 'data'), hooks: { token: 't', mappings } });
  const folder = (sign: boolean) => {
    const d = fs.mkdtempSync(path.join(dir, 'fx-'));
    for (const c of SENDER_CASES) {
      const fixture = { name: c.scheme, ...(sign ? { sign: true } : {}), request: { path: c.scheme, body: JSON.parse(c.body) }, expect: { status: 200, action: { text: `${c.scheme} event` } } };
      fs.writeFileSync(path.join(d, `${c.scheme}.json`), JSON.stringify(fixture));
    }
    return d;
  };

  it('passes every signed fixture', async () => {
    const r = await runCli(['test', '--fixtures', folder(true), '--config', file]);
    expect(r.stdout, r.stderr).to.include(`${SENDER_CASES.length} passed, 0 failed`);
    expect(r.code).to.equal(0);
  });

  it('refuses every one of them unsigned, 401 invalid_signature', async () => {
    const r = await runCli(['test', '--fixtures', folder(false), '--config', file]);
    expect(r.code).to.equal(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines.at(-1)).to.equal(`0 passed, ${SENDER_CASES.length} failed`);
    for (const line of lines.slice(0, -1)) expect(line).to.match(/^✗ [\w-]+ — expected status 200, got 401 \(invalid_signature: /);
  });
});
