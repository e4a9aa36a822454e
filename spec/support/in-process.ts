import path from 'node:path';
import Database from 'better-sqlite3';
import { configFromObject } from '../../src/config/load.js';
import type { Logger } from '../../src/log.js';
import { silentLogger } from './silent-logger.js';
import { start, type Running } from '../../src/serve.js';
import { DB_FILE } from '../../src/store/sqlite.js';
import { ADMIN_TOKEN, freePort, tmpDir, withAdminToken } from './gateway.js';

export { ADMIN_TOKEN };

export const TOKEN = 'spec-token-0123456789abcdef';

export interface InProcess {
  running: Running;
  base: string;
  hooks: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * The real app (config loader, engine, SQLite store, runtime, listener) in this process on
 * a free port: HTTP specs talk to it over real sockets. `raw` is merged onto a minimal config
 * (one transform worker unless it says more); `log` receives its log (default: none).
 */
export async function startInProcess(raw: Record<string, any> = {}, dir = tmpDir(), log: Logger = silentLogger): Promise<InProcess> {
  const port = await freePort();
  const config = {
    ...raw,
    server: { host: '127.0.0.1', port, ...withAdminToken(raw).server },
    dataDir: raw.dataDir ?? path.join(dir, 'data'),
    hooks: { token: TOKEN, transformPoolSize: 1, ...raw.hooks },
    agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', ...raw.agent },
    heartbeat: { everySeconds: 3600, ...raw.heartbeat },
  };
  const loaded = configFromObject(config, path.join(dir, 'hookrelay.yaml'), {});
  const running = await start(loaded, log);
  const base = running.listener.url;
  return { running, base, hooks: `${base}${loaded.config.hooks.path}`, dir, stop: () => running.stop() };
}

/** The rows `sql` reads from the app's SQLite file, opened read-only beside its store (WAL lets both). */
export function storeRows<T>(app: InProcess, sql: string): T[] {
  const db = new Database(path.join(app.dir, 'data', DB_FILE), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}
