import { resolve } from 'node:path';
import { ConfigError } from '../config/errors.js';
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import type { StoreOptions } from './shell.js';
import { openSqliteReader, SqliteStore } from './sqlite.js';
import { StoreError, type Store, type StoreReader } from './store.js';

/** Opens the store that `config.store.kind` names; a data directory another process holds is a {@link ConfigError} at `dataDir`. */
export async function openStore(config: Config, log: Logger, metrics?: { commit(accepts: number): void }, instanceId?: string): Promise<Store> {
  // Every value as the loader resolved it: the schema holds the defaults, no store repeats them.
  const common: StoreOptions = {
    retainDays: config.store.retainDays,
    idempotencyWindowSeconds: config.hooks.idempotencyWindowSeconds,
    log,
    onCommit: metrics && ((accepts) => metrics.commit(accepts)),
  };
  if (config.store.kind === 'postgres') {
    // Loaded only for this kind: pg and the PostgreSQL store are start-up time and resident
    // memory that a SQLite gateway does not need.
    const { PostgresStore } = await import('./postgres.js');
    return PostgresStore.open({
      ...common,
      url: config.store.url!, // required with kind: postgres (the loader checks)
      poolSize: config.store.poolSize,
      leaseSeconds: config.store.leaseSeconds,
      instanceId,
    });
  }
  try {
    return await SqliteStore.open({ ...common, dataDir: resolve(config.dataDir), durability: config.store.durability });
  } catch (err) {
    if (err instanceof StoreError && err.code === 'locked') throw new ConfigError([{ path: 'dataDir', message: err.message }]);
    throw err;
  }
}

/** Opens the store for reading only, beside a running server; {@link StoreError} `unavailable`, saying what to do, when there is none or its schema is another version's. */
export async function openStoreReadOnly(config: Config): Promise<StoreReader> {
  if (config.store.kind === 'postgres') return (await import('./postgres.js')).openPgReader(config.store.url!);
  return openSqliteReader(resolve(config.dataDir));
}
