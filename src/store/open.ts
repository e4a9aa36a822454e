import { resolve } from 'node:path';
import type { Config } from '../config/types.js';
import type { Logger } from '../log.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './store.js';

/**
 * Opens the store that `config.store.kind` names. `config.dataDir` is expected to be
 * absolute already (the config loader resolves it against the config file's directory);
 * a relative one resolves against the working directory.
 */
export async function openStore(config: Config, log: Logger): Promise<Store> {
  const kind = config.store.kind;
  switch (kind) {
    case 'sqlite':
      return SqliteStore.open({ dataDir: resolve(config.dataDir), durability: config.store.durability, log });
    default: {
      const never: never = kind;
      throw new Error(`unknown store kind: ${String(never)}`);
    }
  }
}
