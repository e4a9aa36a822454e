import { expect } from 'chai';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { traversable } from '../../support/postgres.js';

// The test cluster's folder must be reachable by the postgres user; opening a folder on the
// way must never take away its other bits (it once left /tmp at 0711: no one else could write there).
describe('spec support: traversable()', () => {
  const mode = (dir: string) => statSync(dir).mode & 0o7777;

  it('adds execute for group and others, keeping the sticky and write bits of a /tmp-like folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trav-'));
    chmodSync(dir, 0o1777);
    traversable(dir);
    expect(mode(dir)).to.equal(0o1777);
    chmodSync(dir, 0o1770);
    traversable(dir);
    expect(mode(dir)).to.equal(0o1771);
    chmodSync(dir, 0o700);
    traversable(dir);
    expect(mode(dir)).to.equal(0o711);
  });
});
