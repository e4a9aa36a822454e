import { expect } from 'chai';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../support/silent-logger.js';
import { openStore } from '../../../src/store/open.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import type { Config } from '../../../src/config/types.js';
import type { NewEvent, NewRun } from '../../../src/store/records.js';
import { expectCode } from './fixtures.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const ev = (id: string, extra: Partial<NewEvent> = {}): NewEvent => ({
  id, kind: 'wake', text: `text ${id}`, source: 'wake', at: '2025-01-01T00:00:00.000Z', unsafe: false, ...extra,
});
const run = (runId: string, sessionKey = `hook:${runId}`, extra: Partial<NewRun> = {}): NewRun => ({
  runId, sessionKey, message: `msg ${runId}`, wakeMode: 'now', deliver: false, provider: 'last',
  source: 'agent', unsafe: false, createdAt: '2025-01-01T00:00:00.000Z', ...extra,
});

describe('store/sqlite: records and lifecycle', () => {
  let dir: string;
  let store: SqliteStore;
  const open = (durability: 'fsync' | 'os' = 'fsync') => SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability, log: silentLogger });

  beforeEach(async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'hookrelay-store-')), 'nested', 'data');
    store = await open();
  });
  afterEach(async () => {
    await store.close();
    rmSync(join(dir, '..', '..'), { recursive: true, force: true });
  });

  it('creates {dataDir}/hookrelay.db (mkdir -p) at the current schema version', () => {
    expect(existsSync(join(dir, 'hookrelay.db'))).to.equal(true);
    const db = new Database(join(dir, 'hookrelay.db'), { readonly: true });
    expect(db.pragma('user_version', { simple: true })).to.equal(SCHEMA_VERSION);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).to.include.members(['events', 'runs', 'history', 'state']);
    db.close();
  });

  it('maps durability fsync to WAL + synchronous=FULL on the writer connection', async () => {
    expect(await store.pragmas()).to.deep.equal({ journalMode: 'wal', synchronous: 2, fullfsync: 1, userVersion: SCHEMA_VERSION, cacheSize: -2000 });
  });

  it("gives the writer connection SQLite's default page cache (2 MiB), not better-sqlite3's 16 MiB", async () => {
    expect((await store.pragmas()).cacheSize).to.equal(-2000);
    const db = new Database(join(dir, 'hookrelay.db'), { readonly: true });
    expect(db.pragma('cache_size', { simple: true }), "better-sqlite3's default").to.equal(-16000);
    db.close();
  });

  it('maps durability os to WAL + synchronous=NORMAL', async () => {
    await store.close();
    store = await open('os');
    expect(await store.pragmas()).to.deep.equal({ journalMode: 'wal', synchronous: 1, fullfsync: 0, userVersion: SCHEMA_VERSION, cacheSize: -2000 });
  });

  it('refuses a database written by a newer schema', async () => {
    await store.close();
    const db = new Database(join(dir, 'hookrelay.db'));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    let err: unknown;
    await open().catch((e) => (err = e));
    expect(String(err)).to.match(/newer than this hookrelay/);
    const fix = new Database(join(dir, 'hookrelay.db'));
    fix.pragma(`user_version = ${SCHEMA_VERSION}`);
    fix.close();
    store = await open();
  });

  it('openStore() picks the SQLite backend from config.store.kind', async () => {
    const config = { dataDir: join(dir, 'via-open'), store: { kind: 'sqlite', durability: 'os' }, hooks: { idempotencyWindowSeconds: 86400 } } as Config;
    const s = await openStore(config, silentLogger);
    expect(s).to.be.instanceOf(SqliteStore);
    expect((await (s as SqliteStore).pragmas()).synchronous).to.equal(1);
    await s.close();
    expect(existsSync(join(dir, 'via-open', 'hookrelay.db'))).to.equal(true);
  });
});
