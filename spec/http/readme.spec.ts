import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../support/gateway.js';
import { blocks, QUICK_START } from '../support/markdown.js';

/** What the README says about the specs (spec/process/readme.spec.ts runs its commands as written). */
describe('README: the quick start and the cookbook run as written', function () {
  it('quick start: the test command is `npm test`, which type-checks and runs every spec', () => {
    expect(blocks(QUICK_START, 'sh')).to.include('npm test\n');
    const { test } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(test).to.equal("tsc --noEmit && mocha 'spec/**/*.spec.ts'");
  });
});
