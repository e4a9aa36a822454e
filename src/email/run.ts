import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../config/errors.js';
import type { LoadedConfig } from '../config/types.js';
import { hookCredentials } from '../config/token.js';
import type { Logger } from '../log.js';
import { localHost } from '../ready-check.js';
import { openProgress } from './progress.js';
import { openThreads } from './threads.js';
import { watch, type ImapAccount } from './watcher.js';

/** The config must carry the hooks token already (the CLI runs ensureToken first). @throws ConfigError when `hooks.email` is missing or the password cannot be found. */
export async function runEmail(loaded: LoadedConfig, env: NodeJS.ProcessEnv, log: Logger, signal: AbortSignal, backfill = 0): Promise<void> {
  const { hooks, server, dataDir } = loaded.config;
  const email = hooks.email;
  if (!email) {
    throw new ConfigError([{ path: 'hooks.email', message: 'is not set: run `hookrelay email setup --imap-host HOST --user USER --password-env VAR` first' }]);
  }
  const { imap } = email;
  let pass: string;
  let passwordFrom: string;
  if (imap.passwordEnv) {
    passwordFrom = `$${imap.passwordEnv}`;
    pass = env[imap.passwordEnv] ?? '';
    if (!pass) throw new ConfigError([{ path: 'hooks.email.imap.passwordEnv', message: `the environment variable ${imap.passwordEnv} is not set: export it with the IMAP password` }]);
  } else {
    const file = resolve(loaded.baseDir, imap.passwordFile!);
    passwordFrom = file;
    try {
      pass = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      throw new ConfigError([{ path: 'hooks.email.imap.passwordFile', message: `${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` }]);
    }
  }
  const account: ImapAccount = { ...imap, port: imap.port ?? (imap.tls === 'implicit' ? 993 : 143), pass, passwordFrom };
  // The first hooks token that reaches the email mapping (a scoped one may not).
  const token = hookCredentials(hooks).find((c) => !c.routes || c.routes.includes('email'))?.token ?? hooks.token;
  const url = email.hookUrl ?? `http://${localHost(server.host)}:${server.port}${hooks.path}/email`;
  const box = `${imap.user}@${account.host}:${account.port}/${email.mailbox}`;
  await watch({
    account,
    mailbox: email.mailbox,
    target: { url, token },
    progress: openProgress(dataDir, box),
    threads: openThreads(dataDir, box),
    limits: { bodyMaxChars: email.bodyMaxChars, snippetChars: email.snippetChars },
    pollSeconds: email.pollSeconds,
    backfill,
    log,
    signal,
  });
}
