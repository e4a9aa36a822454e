import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from './config/errors.js';
import { StoreError } from './store/store.js';
import type { ConfigOverrides } from './config/load.js';
import { EVENTS_LIMIT, RUNS_LIMIT } from './http/limits.js';
import type { Config, LoadedConfig } from './config/types.js';

// Each command loads what it needs when it runs: `--help` and `check` should not pay for
// Koa, SQLite and the model client (start-up time is one of the benchmark's figures).
// require(), not import(): the bin runs the sources through tsx's CommonJS hook (src/bin.mjs).
const require = createRequire(import.meta.url);
const configLoader = async (): Promise<typeof import('./config/load.js')> => require('./config/load.ts');
const tokenModule = async (): Promise<typeof import('./config/token.js')> => require('./config/token.ts');
const compileModule = async (): Promise<typeof import('./compile-config.js')> => require('./compile-config.ts');
const storeModule = async (): Promise<typeof import('./store/open.js')> => require('./store/open.ts');
const copyModule = async (): Promise<typeof import('./store/copy.js')> => require('./store/copy.ts');
const logModule = async (): Promise<typeof import('./log.js')> => require('./log.ts');
const serveModule = async (): Promise<typeof import('./serve.js')> => require('./serve.ts');
const warningsModule = async (): Promise<typeof import('./config/warnings.js')> => require('./config/warnings.ts');
const dryRunModule = async (): Promise<typeof import('./dry-run.js')> => require('./dry-run.ts');
const LIMITS = { events: EVENTS_LIMIT, runs: RUNS_LIMIT };
const emailSetupModule = async (): Promise<typeof import('./email/setup.js')> => require('./email/setup.ts');
const emailRunModule = async (): Promise<typeof import('./email/run.js')> => require('./email/run.ts');
const emailWatcherModule = async (): Promise<typeof import('./email/watcher.js')> => require('./email/watcher.ts');
const printableModule = async (): Promise<typeof import('./printable.js')> => require('./printable.ts');

/**
 * The command line, and the only reader of argv and the environment (STYLE.md).
 * Every command has --help; config problems print one per line with their YAML path.
 */
export async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name('hookrelay')
    .description('Self-hosted webhook gateway for AI agents: JSON POSTs become wake events or agent turns.')
    .version(version(), '-V, --version')
    .showHelpAfterError('(run with --help for usage)');

  const configOption = () => new Option('-c, --config <file>', 'config file (default: $HOOKRELAY_CONFIG, else ./hookrelay.yaml)');

  program
    .command('serve')
    .description('validate the config, load presets, templates and transforms, and listen until SIGINT/SIGTERM')
    .addOption(configOption())
    .option('--fallback-config <file>', 'config to serve when neither --config, $HOOKRELAY_CONFIG nor ./hookrelay.yaml is there (npm start passes the example)')
    .option('--host <address>', 'address to listen on, over server.host (a non-loopback address needs a configured token)')
    .option('--port <n>', 'port to listen on, over server.port (0: any free port)', portNumber)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (default: config log.level, or $HOOKRELAY_LOG_LEVEL)')
    .action(async (opts) => {
      const { loaded, engine } = await compile(opts.config, { host: opts.host, port: opts.port }, opts.fallbackConfig);
      const level = opts.logLevel ?? process.env.HOOKRELAY_LOG_LEVEL ?? loaded.config.log.level;
      const [{ createLogger }, { ensureToken }, { serve }] = await Promise.all([logModule(), tokenModule(), serveModule()]);
      const log = createLogger(level);
      const withToken = orExit(() => ensureToken(loaded, { log }));
      await orExitAsync(() => serve(withToken, log, { out: (line) => process.stdout.write(`${line}\n`) }, { engine, finish: (next) => ensureToken(next, { log }) }));
    });

  program
    .command('check')
    .description('validate the config, compile every template and load every transform; exit 1 listing each problem')
    .addOption(configOption())
    .action(async (opts) => {
      // One pass: the loader's problems and every template's, schema's and transform's together.
      const { loaded, engine } = await compile(opts.config);
      await engine.close();
      const { ensureToken } = await tokenModule();
      orExit(() => ensureToken(loaded, { dryRun: true }));
      const { configWarnings } = await warningsModule();
      for (const line of configWarnings(loaded.config)) process.stderr.write(`warning: ${line}\n`);
      const n = loaded.config.hooks.mappings.length;
      process.stdout.write(`ok: ${loaded.file} is valid (${n} mapping${n === 1 ? '' : 's'}: ${engine.mappings.join(', ') || 'none'})\n`);
      process.stdout.write(`${servedAt(loaded.config)}\n`);
    });

  program
    .command('test')
    .description('dry run: resolve POST {path}/NAME against a payload and print the resulting action as JSON; dispatches nothing')
    .argument('<name>', 'the hook name, i.e. the NAME in POST {hooks.path}/NAME')
    .requiredOption('-p, --payload <file>', 'the request body, read as the listener reads it: JSON, or form data with --header content-type=application/x-www-form-urlencoded')
    .addOption(configOption())
    .option('-H, --header <k=v>', 'a request header (repeatable)', collect, [])
    .option('-q, --query <k=v>', 'a query parameter (repeatable)', collect, [])
    .action(async (name: string, opts) => {
      const { loaded, engine } = await compile(opts.config);
      const { dryRun, DryRunProblem } = await dryRunModule();
      const headers = pairs(opts.header, '--header', (k) => k.toLowerCase());
      let bytes: Buffer;
      try {
        bytes = readFileSync(opts.payload);
      } catch (e) {
        fail(`--payload ${opts.payload}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
      }
      try {
        const query = new URLSearchParams(pairs(opts.query, '--query')).toString();
        const out = await dryRun(engine, loaded.config.hooks.path, { name, body: bytes, headers, query, now: new Date() });
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      } catch (e) {
        if (!(e instanceof DryRunProblem)) throw e;
        // The author's own tool: the cause of a failing template or transform, stack and
        // all, is what they need (the listener only logs it, at debug level).
        for (let cause = e.cause; cause !== undefined; cause = (cause as Error)?.cause) {
          process.stderr.write(`cause: ${cause instanceof Error ? cause.stack ?? String(cause) : String(cause)}\n`);
        }
        fail(e.stage === 'payload' ? `--payload ${opts.payload}: ${e.message}` : e.message);
      } finally {
        await engine.close(); // fail() exits at once: its workers end with the process
      }
    });

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
    .action(async (opts) => {
      const [{ resolveConfigPath }, { emailSetup }] = await Promise.all([configLoader(), emailSetupModule()]);
      const file = resolveConfigPath(opts.config, process.env);
      const { changed } = orExit(() => emailSetup(file, opts));
      process.stdout.write(changed ? `wrote hooks.email to ${file}; now run: hookrelay email run\n` : `${file} already has these settings; nothing changed\n`);
    });
  email
    .command('run')
    .description('watch the configured IMAP mailbox and POST each new mail once to {hooks.path}/email (runs until stopped; progress is kept in dataDir)')
    .addOption(configOption())
    .option('--backfill <n>', 'first run only: post the last N mails of the mailbox once (default: start from now)', toInt, 0)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (default: config log.level, or $HOOKRELAY_LOG_LEVEL)')
    .action(async (opts) => {
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
    });

  program
    .command('events')
    .description("print the main session's events (wake, summary, reply) from the store")
    .addOption(configOption())
    .option('--after <seq>', 'only events after this sequence number', toInt, 0)
    .option('--limit <n>', `at most this many per page (1–${LIMITS.events.max})`, (v) => toLimit(v, LIMITS.events.max), LIMITS.events.default)
    .option('-f, --follow', 'keep printing new events as they arrive (Ctrl-C to stop)')
    .option('--json', 'one JSON object per line')
    .action(async (opts) => {
      const loaded = await load(opts.config);
      const [{ openStoreReadOnly }, { printable, printableJson }] = await Promise.all([storeModule(), printableModule()]);
      const store = await orExitAsync(() => openStoreReadOnly(loaded.config)); // read-only: works beside a running server
      let after: number = opts.after;
      for (;;) {
        const events = await store.listEvents(after, opts.limit);
        for (const e of events) {
          process.stdout.write(opts.json ? `${printableJson(e)}\n`
            : `${printable(`#${e.seq} ${e.at} ${e.kind} ${e.source}: ${e.text}`)}\n`);
          after = e.seq;
        }
        if (events.length === opts.limit) continue;
        if (!opts.follow) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      await store.close();
    });

  program
    .command('runs')
    .description('list agent runs (most recently accepted first), or show one run')
    .argument('[id]', 'a run id')
    .addOption(configOption())
    .option('--limit <n>', `at most this many (1–${LIMITS.runs.max})`, (v) => toLimit(v, LIMITS.runs.max), LIMITS.runs.default)
    .addOption(new Option('--status <status>', 'only runs in this state').choices(['queued', 'running', 'succeeded', 'failed', 'timed_out']))
    .option('--before <id>', 'only runs accepted before this one (page on with the last id listed)')
    .option('--json', 'JSON output')
    .action(async (id: string | undefined, opts) => {
      const loaded = await load(opts.config);
      const [{ openStoreReadOnly }, { printable, printableJson }] = await Promise.all([storeModule(), printableModule()]);
      const store = await orExitAsync(() => openStoreReadOnly(loaded.config)); // read-only: works beside a running server
      try {
        if (id !== undefined) {
          const run = await store.getRun(id);
          if (!run) fail(`no run with id ${printable(id)}`);
          process.stdout.write(`${printableJson(run, 2)}\n`);
          return;
        }
        if (opts.before !== undefined && !(await store.getRun(opts.before))) fail(`--before: no run with id ${printable(opts.before)}`);
        const runs = await store.listRuns({ limit: opts.limit, status: opts.status, before: opts.before });
        for (const r of runs) {
          const error = r.error ? ` — ${r.errorCode ? `[${r.errorCode}] ` : ''}${r.error}` : '';
          const d = r.delivery;
          const delivery = d ? ` delivery ${d.status} ${d.target} (${d.attempts} attempt${d.attempts === 1 ? '' : 's'})` : '';
          const f = r.forwarded;
          const forwarded = f ? ` forwarded ${f.status}${f.upstreamRunId ? ` upstream ${f.upstreamRunId}` : ''}` : '';
          process.stdout.write(opts.json ? `${printableJson(r)}\n`
            : `${printable(`${r.runId} ${r.status.padEnd(9)} ${r.createdAt} ${r.sessionKey}${r.name ? ` [${r.name}]` : ''}${delivery}${forwarded}${error}`)}\n`);
        }
      } finally {
        await store.close();
      }
    });

  program
    .command('store')
    .description('work on the store itself')
    .command('copy')
    .description('copy events, runs, conversations, the outbox, idempotency keys and state from one store to another, empty one (e.g. SQLite → PostgreSQL); stop the servers of both first')
    .requiredOption('--from <file>', 'config file of the store to copy from')
    .requiredOption('--to <file>', 'config file of the store to copy into (it must be empty)')
    .action(async (opts: { from: string; to: string }) => {
      const [from, to] = [await load(opts.from), await load(opts.to)];
      const { copyStore } = await copyModule();
      const counts = await orExitAsync(() => copyStore(from.config, to.config, (line) => process.stdout.write(`${line}\n`)));
      process.stdout.write(`copied: ${Object.entries(counts).map(([t, n]) => `${n} ${t}`).join(', ')}\n`);
    });

  await program.parseAsync(argv);
}

/** Reads, validates and compiles the config in one pass (compile-config.ts); every problem: exit 1. */
async function compile(flag: string | undefined, overrides?: ConfigOverrides, fallback?: string) {
  const [{ readConfig, resolveConfigPath }, { compileConfig }] = await Promise.all([configLoader(), compileModule()]);
  const file = resolveConfigPath(flag, process.env, fallback);
  return orExitAsync(() => compileConfig(readConfig(file, overrides), file, process.env));
}

async function load(flag: string | undefined, overrides?: ConfigOverrides, fallback?: string): Promise<LoadedConfig> {
  const { loadConfig, resolveConfigPath } = await configLoader();
  return orExit(() => loadConfig(resolveConfigPath(flag, process.env, fallback), process.env, overrides));
}

/** `--port`: commander hands over text; a typo should name the option, not `server.port`. */
function portNumber(text: string): number {
  const n = Number(text);
  if (!/^\d{1,5}$/.test(text) || n > 65535) throw new InvalidArgumentError('must be a port number, 0–65535');
  return n;
}

/** Config problems: one per line with its path, exit 1; a store that cannot be opened: its message, exit 1. Anything else is a bug: rethrow. */
function orExit<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    return reportConfig(e);
  }
}

async function orExitAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    return reportConfig(e);
  }
}

function reportConfig(e: unknown): never {
  if (e instanceof ConfigError) {
    for (const p of e.problems) process.stderr.write(`${p.path}: ${p.message}\n`);
    process.exit(1);
  }
  // A store that cannot be read (none yet, another schema version): its message says what to do.
  if (e instanceof StoreError) fail(e.message);
  throw e;
}

function fail(message: string): never {
  process.stderr.write(`hookrelay: ${message}\n`);
  process.exit(1);
}

/**
 * An action as the body of the request that would ask for it directly — `/wake`'s
 * `{text, mode}`, `/agent`'s `{message, name, sessionKey, …}` — with `action` naming which, so
 * that a dry run reads like what the listener will do (and can be sent to that endpoint).
 */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function pairs(list: string[], flag: string, key: (k: string) => string = (k) => k): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const i = item.indexOf('=');
    if (i <= 0) fail(`${flag} ${item}: expected K=V`);
    out[key(item.slice(0, i))] = item.slice(i + 1);
  }
  return out;
}

/** `--limit`: the same rule as the endpoints' `limit` (1 to the maximum; past it is an error, not a clamp). */
function toLimit(v: string, max: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`--limit: expected a whole number from 1 to ${max}, got ${v}`);
  return n;
}

function toInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) fail(`expected a whole number, got ${v}`);
  return n;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * What `serve` will answer where, for `check`: the hooks, the console and `/metrics` (both
 * behind the hooks token, README "Console" and "Metrics"), or that they are off.
 */
function servedAt(config: Config): string {
  const { host, port } = config.server;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const hooksAt = config.hooks.enabled ? `hooks at ${base}${config.hooks.path} (sending: the hooks token; reading events and runs: the admin token)` : 'hooks disabled (hooks.enabled: false)';
  const consoleAt = config.server.console ? `console at ${base}/console/` : 'console off (server.console: false)';
  const metricsAt = config.server.metrics ? `metrics at ${base}/metrics` : 'metrics off (server.metrics: false)';
  return `serves: ${hooksAt}, ${consoleAt}, ${metricsAt} (behind the admin token)`;
}
