import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/config/errors.js';
import type { Config } from '../../../src/config/types.js';
import { silentLogger } from '../../support/silent-logger.js';
import { openStore } from '../../../src/store/open.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import type { NewRun } from '../../../src/store/records.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const run = (runId: string): NewRun => ({
  runId, sessionKey: `hook:${runId}`, message: 'm', wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z',
});

/** The rejection of `p` (fails the spec when it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  return p.then(
    (v) => { throw new Error(`expected a rejection, got ${String(v)}`); },
    (e: Error & { code?: string }) => e,
  );
}

describe('store/sqlite: the data-directory lock', () => {
  let dir: string;
  const open = () => SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'os', log: silentLogger });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second store on the same folder in the same process, naming this pid and the folder; the first keeps working', async () => {
    const first = await open();
    try {
      await first.accept([], [run('r1')]);
      await first.claimRuns(1, 't');
      const err = await rejection(open());
      expect(err.name).to.equal('StoreError');
      expect(err.code).to.equal('locked');
      expect(err.message).to.include(dir).and.include(`pid ${process.pid}`);
      // The refused open touched nothing: the first store's run is still its running run.
      expect((await first.getRun('r1'))!.status).to.equal('running');
      await first.accept([], [run('r2')]);
      expect((await first.listRuns({ limit: 10 })).map((r) => r.runId)).to.deep.equal(['r2', 'r1']);
    } finally {
      await first.close();
    }
  });

  it('is released by close(), and by an open that fails after taking it', async () => {
    const first = await open();
    await first.close();
    const second = await open(); // at once: no stale lock
    await rejection(open());
    await second.close();
    const third = await open();
    await third.close();
  });

  it('is a ConfigError at dataDir through openStore(), as serve prints it', async () => {
    const config = { dataDir: dir, store: { kind: 'sqlite', durability: 'os' }, hooks: { idempotencyWindowSeconds: 86400 } } as Config;
    const first = await openStore(config, silentLogger);
    try {
      const err = await rejection(openStore(config, silentLogger));
      expect(err).to.be.instanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).to.have.length(1);
      expect(problems[0]!.path).to.equal('dataDir');
      expect(problems[0]!.message).to.include(dir).and.match(/close that one first/);
    } finally {
      await first.close();
    }
  });
});
