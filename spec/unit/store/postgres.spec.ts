import { expect } from 'chai';
import pg from 'pg';
import { configFromObject } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/config/errors.js';
import { silentLogger } from '../../support/silent-logger.js';
import { openStore, openStoreReadOnly } from '../../../src/store/open.js';
import { PostgresStore } from '../../../src/store/postgres.js';
import { redactUrl } from '../../../src/store/postgres-pool.js';
import { PG_SCHEMA_VERSION } from '../../../src/store/postgres-schema.js';
import { StoreError } from '../../../src/store/store.js';
import type { Config } from '../../../src/config/types.js';
import { freshDatabase } from '../../support/postgres.js';
import { PG_SPEC_OPTIONS } from '../../support/store-options.js';

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text)).rows;
  } finally {
    await c.end();
  }
}

describe('store/postgres: what only the PostgreSQL store has', function () {
  this.timeout(60000);

  it('migrates once when several stores open a new database at the same time (advisory lock)', async () => {
    const url = await freshDatabase('migrate');
    const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 2, log: silentLogger })));
    try {
      expect(await sql<{ version: number }>(url, 'SELECT version FROM hookrelay_schema')).to.deep.equal([{ version: PG_SCHEMA_VERSION }]);
      await stores[0]!.accept([{ id: 'e1', kind: 'wake', text: 't', source: 'wake', at: '2026-01-01T00:00:00.000Z', unsafe: false }], []);
      expect((await stores[3]!.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['e1']);
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('refuses a database written by a newer schema', async () => {
    const url = await freshDatabase('newer');
    await (await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 1, log: silentLogger })).close();
    await sql(url, `UPDATE hookrelay_schema SET version = ${PG_SCHEMA_VERSION + 1}`);
    const err = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 1, log: silentLogger }).catch((e) => e);
    expect(String(err)).to.match(/newer than this hookrelay understands .*upgrade hookrelay/);
  });

  it('an unreachable database: unavailable, naming the URL without its password', async () => {
    const url = 'postgres://hookrelay:s3cret-pw@127.0.0.1:9/hookrelay';
    const err = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 1, log: silentLogger }).catch((e) => e);
    expect(err).to.be.instanceOf(StoreError).and.include({ code: 'unavailable' });
    expect(err.message).to.include('postgres://hookrelay:***@127.0.0.1:9/hookrelay');
    expect(err.message).to.not.include('s3cret-pw');
    expect(redactUrl('postgres://u@h/db')).to.equal('postgres://u@h/db');
  });

  it('config: store.kind postgres needs store.url (a problem at store.url); openStore and openStoreReadOnly pick it', async () => {
    let err: unknown;
    try {
      configFromObject({ store: { kind: 'postgres' }, hooks: { token: 't' } }, '/tmp/hookrelay.yaml', {});
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as ConfigError).problems).to.deep.include({ path: 'store.url', message: 'is required with store.kind: postgres, e.g. postgres://user:${PGPASSWORD}@host:5432/hookrelay' });

    const url = await freshDatabase('open');
    const config = { dataDir: '/nonexistent', store: { kind: 'postgres', url, poolSize: 3, retainDays: 30, leaseSeconds: PG_SPEC_OPTIONS.leaseSeconds }, hooks: { idempotencyWindowSeconds: 60 } } as Config;
    const notYet = await openStoreReadOnly(config).catch((e) => e);
    expect(String(notYet)).to.match(/no store yet in .*`hookrelay serve` creates it there/);
    const store = await openStore(config, silentLogger);
    // open.ts imports the PostgreSQL store when asked for it (`import()`); mocha loads this
    // file through tsx's CommonJS hook, so the class to compare is the one `import()` gives.
    expect(store).to.be.instanceOf((await import('../../../src/store/postgres.js')).PostgresStore);
    await store.accept([{ id: 'e1', kind: 'wake', text: 't', source: 'wake', at: '2026-01-01T00:00:00.000Z', unsafe: false }], []);
    const reader = await openStoreReadOnly(config);
    expect((await reader.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['e1']);
    // The request log too (`hookrelay requests`, `hookrelay fixture`).
    await store.logRequests([{ at: 'a', method: 'POST', path: '/hooks/x', route: 'unmatched', status: 404, ms: 1, eventIds: [], runIds: [], replayed: false, body: '{}', bodyUntil: '2999-01-01T00:00:00.000Z' }]);
    const [row] = await reader.listRequests({ limit: 10 });
    expect(row).to.include({ path: '/hooks/x', status: 404 });
    expect((await reader.getRequest(row!.seq))?.body).to.equal('{}');
    await reader.close();
    await store.close();
  });
});

describe('store/postgres: text PostgreSQL cannot hold', function () {
  this.timeout(60000);

  it('a NUL character is stored as U+FFFD, and a value the database refuses fails only its own accept', async () => {
    const url = await freshDatabase('nul');
    const store = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 2, log: silentLogger });
    try {
      const ev = (id: string, text: string, extra: Record<string, unknown> = {}) => ({ id, kind: 'wake' as const, text, source: 'wake', at: '2026-01-01T00:00:00.000Z', unsafe: false, ...extra });
      const run = { runId: 'r1', sessionKey: 'hook:a\u0000b', message: 'm\u0000', wakeMode: 'now' as const, deliver: false, provider: 'last' as const, source: 'agent', unsafe: false, createdAt: 'a' };
      // One turn of the event loop: one batch. A timeoutSeconds that is no number is a data
      // exception (SQLSTATE 22P02) of that accept alone.
      const results = await Promise.all([
        store.accept([ev('e1', 'before\u0000after')], [run]),
        store.accept([], [{ ...run, runId: 'r2', sessionKey: 'hook:x', timeoutSeconds: 'soon' as unknown as number }]).then(() => 'ok', (e) => e.code),
        store.accept([ev('e3', 'fine')], []),
      ]);
      expect(results[1]).to.equal('failed');
      expect((await store.listEvents(0, 10)).map((e) => e.text)).to.deep.equal(['before\uFFFDafter', 'fine']);
      expect(await store.getRun('r1')).to.include({ sessionKey: 'hook:a\uFFFDb', message: 'm\uFFFD' });
      expect(await store.getRun('r2')).to.equal(undefined);
    } finally {
      await store.close();
    }
  });
});
