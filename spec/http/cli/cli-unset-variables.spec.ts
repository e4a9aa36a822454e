import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { tmpDir } from '../../support/gateway.js';

/** Runs the CLI's `main` in this process with the environment minus `unset`. */
const run = (args: string[], unset: string[]) => runCli(args, Object.fromEntries(unset.map((name) => [name, undefined])));

describe('cli: unset ${VAR}s — the store readers need only dataDir and store; each problem once', function () {
  this.timeout(60000);

  it('a variable the store needs is still required, reported once', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'hookrelay.json');
    writeFileSync(file, JSON.stringify({ store: { kind: 'postgres', url: '${SPEC_PG_URL}' } }));
    const r = await run(['runs', '--config', file], ['SPEC_PG_URL']);
    expect(r.code).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.deep.equal(['store.url: ${SPEC_PG_URL} is not set: set SPEC_PG_URL, or write ${SPEC_PG_URL:-} (empty) or ${SPEC_PG_URL:-default}']);
  });
});
