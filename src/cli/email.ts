import type { Command } from 'commander';
import type { SetupOptions } from '../email/setup.js';
import { configOption, toInt } from './arguments.js';
import { load } from './config.js';
import { fail, orExit, reportConfig } from './exit.js';

interface EmailRunOptions {
  config?: string;
  backfill: number;
  logLevel?: string;
}

/** `hookrelay email setup` and `email run`: the e-mail integration (CONTRACT.md §7). */
export function emailCommand(program: Command): void {
  const email = program.command('email').description('the e-mail integration: new mail in an IMAP mailbox becomes an agent run (see README "E-mail")');
  email
    .command('setup')
    .description('write the e-mail settings under hooks.email and add `email` to hooks.presets, keeping the rest of the file (comments included); running it again with the same options changes nothing')
    .requiredOption('--imap-host <host>', 'IMAP server name, without scheme or port (e.g. imap.gmail.com)')
    .option('--imap-port <n>', 'IMAP port (default: 993 with --tls implicit, else 143)')
    .option('--tls <mode>', 'implicit: TLS from the start (port 993); starttls: upgrade a plain connection (port 143); none: no encryption, only for a server on this machine', 'implicit')
    .requiredOption('--user <user>', 'login name (for Gmail, the full address)')
    .option('--password-env <VAR>', 'name of the environment variable holding the password (written to the config: the name, never the password)')
    .option('--password-file <file>', 'file holding the password, relative to the config file (instead of --password-env)')
    .option('--mailbox <name>', 'mailbox to watch; Sent, Drafts, Junk and Trash (by their special-use flags) are refused', 'INBOX')
    .option('--hook-url <url>', 'where each mail is posted (default: http://{server.host}:{server.port}{hooks.path}/email)')
    .addOption(configOption())
    .addHelpText('after', `
Example: Gmail over IMAP with an app password
  (Google account → Security → 2-Step Verification → App passwords; IMAP is on in Gmail's settings)

  hookrelay email setup --imap-host imap.gmail.com --imap-port 993 --tls implicit \\
    --user you@gmail.com --password-env GMAIL_APP_PASSWORD
  export GMAIL_APP_PASSWORD='abcd efgh ijkl mnop'
  hookrelay serve &            # the listener, with the email preset now enabled
  hookrelay email run          # the companion: each new mail becomes an agent run`)
    .action(setupAction);
  email
    .command('run')
    .description('watch the configured IMAP mailbox and POST each new mail once to {hooks.path}/email (runs until stopped; progress is kept in dataDir)')
    .addOption(configOption())
    .option('--backfill <n>', 'first run only: post the last N mails of the mailbox once (default: start from now)', toInt, 0)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (default: config log.level, or $HOOKRELAY_LOG_LEVEL)')
    .action(runAction);
}

/** Writes hooks.email and enables the preset, keeping the rest of the file. */
async function setupAction(opts: SetupOptions & { config?: string }): Promise<void> {
  const [{ configSource }, { emailSetup }] = await Promise.all([import('../config/load.js'), import('../email/setup.js')]);
  const file = configSource(opts.config).file;
  const { changed } = orExit(() => emailSetup(file, opts));
  process.stdout.write(changed ? `wrote hooks.email to ${file}; now run: hookrelay email run\n` : `${file} already has these settings; nothing changed\n`);
}

/** The companion: posts each new mail of the mailbox once, until SIGINT/SIGTERM. */
async function runAction(opts: EmailRunOptions): Promise<void> {
  const loaded = await load(opts.config);
  const [{ createLogger }, { ensureToken }, { runEmail }, { WatchError }] =
    await Promise.all([import('../log.js'), import('../config/token.js'), import('../email/run.js'), import('../email/watcher.js')]);
  const log = createLogger(opts.logLevel ?? process.env.HOOKRELAY_LOG_LEVEL ?? loaded.config.log.level, undefined, { bufferBytes: loaded.config.log.bufferBytes }).child({ component: 'email' });
  const withToken = orExit(() => ensureToken(loaded, { log }));
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort(new Error(sig)));
  try {
    await runEmail(withToken, process.env, log, stop.signal, opts.backfill);
  } catch (e) {
    if (e instanceof WatchError) fail(e.message);
    reportConfig(e);
  }
  log.info('stopped');
}
