import { expect } from 'chai';
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../../src/store/sqlite.js';
import type { NewEvent } from '../../../src/store/records.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const ev = (id: string): NewEvent => ({
  id, kind: 'wake', text: `secret payload ${id}`, source: 'wake', at: '2025-01-01T00:00:00.000Z', unsafe: false,
});

/** Settles a promise: its rejection's code, or 'ok'. */
const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code?: string }) => e.code);

describe('store/sqlite: a database file removed or replaced under the open store', () => {
  let dir: string;
  let store: SqliteStore;
  let lines: { level: number; msg: string; what?: string }[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-removed-'));
    lines = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'fsync', log });
    await store.accept([ev('before')], []);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const expectGone = async (file: RegExp) => {
    // The batch that committed into the lost file is not acknowledged; later calls, reads too, fail.
    expect(await outcome(store.accept([ev('after')], []))).to.equal('unavailable');
    expect(await outcome(store.accept([ev('later')], []))).to.equal('unavailable');
    expect(await outcome(store.listEvents(0, 10))).to.equal('unavailable');
    expect(await outcome(store.getRun('x'))).to.equal('unavailable');
    expect(await outcome(store.claimRuns(1, 't'))).to.equal('unavailable');
    const errors = lines.filter((l) => l.level >= 50);
    expect(errors, 'one error line').to.have.length(1);
    expect(errors[0]!.msg).to.match(/removed or replaced.*back from a backup.*start it again/);
    expect(errors[0]!.what).to.match(file);
    expect(JSON.stringify(lines)).to.not.include('secret payload');
  };

  it('notices a removed hookrelay.db (and its -wal, -shm) after the next commit; still closes, releasing the folder', async () => {
    for (const f of ['hookrelay.db', 'hookrelay.db-wal', 'hookrelay.db-shm']) rmSync(join(dir, f), { force: true });
    await expectGone(/hookrelay\.db was removed/);
    await store.close();
    store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'fsync', log: pino({ level: 'silent' }) });
    await store.accept([ev('fresh')], []);
    expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['fresh']);
  });

  it('notices a removed -wal alone (its commits would be lost at the next start)', async () => {
    rmSync(join(dir, 'hookrelay.db-wal'));
    await expectGone(/hookrelay\.db-wal was removed/);
  });

  it('notices a file put in its place (a copy restored over it)', async () => {
    copyFileSync(join(dir, 'hookrelay.db'), join(dir, 'copy'));
    renameSync(join(dir, 'copy'), join(dir, 'hookrelay.db'));
    await expectGone(/hookrelay\.db was replaced/);
  });
});
