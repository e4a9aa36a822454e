import path from 'node:path';
import { configFromObject } from '../../src/config/load.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { start, type Running } from '../../src/serve.js';
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
 * a free port: HTTP specs talk to it over real sockets. `raw` is merged onto a minimal config;
 * `log` receives its log (default: none).
 */
export async function startInProcess(raw: Record<string, any> = {}, dir = tmpDir(), log: Logger = silentLogger): Promise<InProcess> {
  const port = await freePort();
  const config = {
    ...raw,
    server: { host: '127.0.0.1', port, ...withAdminToken(raw).server },
    dataDir: raw.dataDir ?? path.join(dir, 'data'),
    hooks: { token: TOKEN, ...raw.hooks },
    agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', ...raw.agent },
    heartbeat: { everySeconds: 3600, ...raw.heartbeat },
  };
  const loaded = configFromObject(config, path.join(dir, 'hookrelay.yaml'), {});
  const running = await start(loaded, log);
  const base = running.listener.url;
  return { running, base, hooks: `${base}${loaded.config.hooks.path}`, dir, stop: () => running.stop() };
}
