import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ConfigError } from './errors.js';
import { deepFreeze } from './load.js';
import type { Config, HooksConfig, LoadedConfig } from './types.js';

type TokenLog = Record<'info' | 'warn', (obj: object, msg: string) => void>;

/** 127.0.0.0/8 (also as `::ffff:127.x`), `::1` in any spelling, and `localhost`. */
export function isLoopback(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost') return true;
  if (h.startsWith('::ffff:') && isIP(h.slice(7)) === 4) h = h.slice(7);
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  // The WHATWG URL parser canonicalises IPv6, so 0:0:0:0:0:0:0:1 and ::0001 become ::1.
  if (isIP(h) === 6) return new URL(`http://[${h}]/`).hostname === '[::1]';
  return false;
}

export type HookCredential = Exclude<NonNullable<HooksConfig['tokens']>[number], string>;

export function hookCredentials(hooks: Readonly<HooksConfig>): HookCredential[] {
  return (hooks.tokens ?? [hooks.token]).map((e) => (typeof e === 'string' ? { token: e } : e));
}

export function adminCredentials(server: Readonly<Config['server']>): string[] {
  return server.adminTokens ? [...server.adminTokens] : server.adminToken ? [server.adminToken] : [];
}

/** The first-use tokens (CONTRACT.md §3, §4) in `{dataDir}`; throws ConfigError on a non-loopback host without one. `dryRun` (`hookrelay check`): the rules alone, no file read or written. */
export function ensureToken(loaded: LoadedConfig, options: { log?: TokenLog; dryRun?: boolean } = {}): LoadedConfig {
  const { hooks, server } = loaded.config;
  const needsHooks = hooks.enabled && !hooks.token && !hooks.tokens;
  // Something takes the admin token: the hooks' read routes, the console or /metrics.
  const needsAdmin = !server.adminToken && !server.adminTokens && (hooks.enabled || server.console || server.metrics);
  if (!needsHooks && !needsAdmin) return loaded;
  if (!isLoopback(server.host)) {
    const problems = [];
    if (needsHooks) {
      problems.push({
        path: 'hooks.token',
        message: `is required when server.host (${server.host}) is not a loopback address: set HOOKRELAY_TOKEN (with "token: \${HOOKRELAY_TOKEN}") or hooks.token`,
      });
    }
    if (needsAdmin) {
      problems.push({
        path: 'server.adminToken',
        message: `is required when server.host (${server.host}) is not a loopback address: set HOOKRELAY_ADMIN_TOKEN (with "adminToken: \${HOOKRELAY_ADMIN_TOKEN}") to a secret of its own, not a hooks token (it reads events and runs, /metrics and the console)`,
      });
    }
    throw new ConfigError(problems);
  }
  if (options.dryRun) return loaded;
  let out = loaded;
  if (needsHooks) {
    const file = tokenFile(loaded.config.dataDir, 'token', 'hooks token', options.log);
    out = { ...out, config: { ...out.config, hooks: { ...out.config.hooks, token: file.token } }, generatedTokenFile: file.file };
  }
  if (needsAdmin) {
    const file = tokenFile(loaded.config.dataDir, 'admin-token', 'admin token', options.log);
    out = { ...out, config: { ...out.config, server: { ...out.config.server, adminToken: file.token } }, generatedAdminTokenFile: file.file };
  }
  // A generated admin token that a hooks token repeats (hand-copied) would open the reads to every sender.
  if (needsAdmin && hookCredentials(out.config.hooks).some((c) => c.token === out.config.server.adminToken)) {
    throw new ConfigError([{ path: 'server.adminToken', message: `the token in ${out.generatedAdminTokenFile} is also a hooks token: delete that file (a new admin token is generated) or change the hooks token` }]);
  }
  return deepFreeze(out);
}

/** 32 random bytes, base64url, mode 0600. */
function tokenFile(dataDir: string, name: string, what: string, log?: TokenLog): { file: string; token: string } {
  const file = join(dataDir, name);
  let token = readToken(file, log);
  if (!token) {
    token = randomBytes(32).toString('base64url');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600); // the mode option does not apply when the file already existed (empty)
    log?.info({ file }, `generated the ${what}`);
  }
  return { file, token };
}

function readToken(file: string, log?: TokenLog): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
    log?.warn({ file }, 'the token file is readable by other users; chmod 600 it');
  }
  return text.trim() || undefined;
}
