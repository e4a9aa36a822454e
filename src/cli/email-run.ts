import type { Command } from 'commander';
import { configOption, toInt } from './arguments.js';
import { load } from './config.js';
import { fail, orExit, reportConfig } from './exit.js';
import { emailRunModule, emailWatcherModule, logModule, tokenModule } from './modules.js';

interface EmailRunOptions {
  config?: string;
  backfill: number;
  logLevel?: string;
}

/** `hookrelay email run`: the companion that posts each new mail of the mailbox once. */
export function emailRunCommand(email: Command): void {
  email
    .command('run')
    .description('watch the configured IMAP mailbox and POST each new mail once to {hooks.path}/email (runs until stopped; progress is kept in dataDir)')
    .addOption(configOption())
    .option('--backfill <n>', 'first run only: post the last N mails of the mailbox once (default: start from now)', toInt, 0)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (default: config log.level, or $HOOKRELAY_LOG_LEVEL)')
    .action(emailRun);
}

async function emailRun(opts: EmailRunOptions): Promise<void> {
  const loaded = await load(opts.config);
  const [{ createLogger }, { ensureToken }, { runEmail }, { WatchError }] = await Promise.all([logModule(), tokenModule(), emailRunModule(), emailWatcherModule()]);
  const log = createLogger(opts.logLevel ?? process.env.HOOKRELAY_LOG_LEVEL ?? loaded.config.log.level).child({ component: 'email' });
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
