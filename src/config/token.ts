import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ConfigError } from './errors.js';
import { deepFreeze } from './load.js';
import type { LoadedConfig } from './types.js';

/** The slice of a pino logger this file uses. */
export interface TokenLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface EnsureTokenOptions {
  log?: TokenLog;
  /** `hookrelay check`: apply the rules (refuse a non-loopback host) but read and write nothing. */
  dryRun?: boolean;
}

/**
 * True for addresses that only this machine can reach: 127.0.0.0/8 (also as `::ffff:127.x`),
 * `::1` (any spelling, with or without brackets) and `localhost`.
 */
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

/**
 * The first-use token (CONTRACT.md §3). When the hooks are enabled, `hooks.token` is
 * empty and `hooks.tokens` not given: on a loopback host, reuse `{dataDir}/token` or generate one (32 random bytes,
 * base64url) into it with mode 0600, and return a new frozen config carrying it, with
 * `generatedTokenFile` naming the file (whether it was just written or reused); on any
 * other host, refuse. Otherwise the config is returned unchanged.
 * @throws ConfigError at `hooks.token` on a non-loopback host without a token.
 */
export function ensureToken(loaded: LoadedConfig, options: EnsureTokenOptions = {}): LoadedConfig {
  const { hooks, server, dataDir } = loaded.config;
  if (!hooks.enabled || hooks.token || hooks.tokens) return loaded;
  if (!isLoopback(server.host)) {
    throw new ConfigError([{
      path: 'hooks.token',
      message: `is required when server.host (${server.host}) is not a loopback address: set HOOKRELAY_TOKEN (with "token: \${HOOKRELAY_TOKEN}") or hooks.token`,
    }]);
  }
  if (options.dryRun) return loaded;

  const file = join(dataDir, 'token');
  let token = readToken(file, options.log);
  if (!token) {
    token = randomBytes(32).toString('base64url');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600); // the mode option does not apply when the file already existed (empty)
    options.log?.info({ file }, 'generated the hooks token');
  }
  return deepFreeze({
    ...loaded,
    config: { ...loaded.config, hooks: { ...hooks, token } },
    generatedTokenFile: file,
  });
}

/** The stored token, or undefined when there is none yet. */
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
