import type { Command } from 'commander';
import { configOption, portNumber } from './arguments.js';
import { compile } from './config.js';
import { orExit } from './exit.js';

interface ServeOptions {
  config?: string;
  fallbackConfig?: string;
  host?: string;
  port?: number;
  logLevel?: string;
}

/** `hookrelay serve`: validate, compile, listen until SIGINT/SIGTERM (CONTRACT.md §2). */
export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('validate the config, load presets, templates and transforms, and listen until SIGINT/SIGTERM')
    .addOption(configOption())
    .option('--fallback-config <file>', 'config to serve when neither --config, $HOOKRELAY_CONFIG nor ./hookrelay.yaml is there (npm start passes the example)')
    .option('--host <address>', 'address to listen on, over server.host (a non-loopback address needs a configured token)')
    .option('--port <n>', 'port to listen on, over server.port (0: any free port)', portNumber)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (default: config log.level, or $HOOKRELAY_LOG_LEVEL)')
    .action(serveAction);
}

async function serveAction(opts: ServeOptions): Promise<void> {
  // The config's modules first, so that the transform workers start as soon as it is read;
  // then the listener's load while the config compiles (mostly waiting for those workers).
  await Promise.all([import('../config/load.js'), import('../compile-config.js')]);
  const modules = Promise.all([import('../log.js'), import('../config/token.js'), import('../serve.js')]);
  const { loaded, engine, from } = await compile(opts.config, { overrides: { host: opts.host, port: opts.port }, fallback: opts.fallbackConfig });
  const level = opts.logLevel ?? process.env.HOOKRELAY_LOG_LEVEL ?? loaded.config.log.level;
  const [{ createLogger }, { ensureToken }, { serve }] = await modules;
  const log = createLogger(level, undefined, { bufferBytes: loaded.config.log.bufferBytes });
  const withToken = orExit(() => ensureToken(loaded, { log }));
  const levelFixedBy = opts.logLevel !== undefined ? '--log-level' : process.env.HOOKRELAY_LOG_LEVEL !== undefined ? '$HOOKRELAY_LOG_LEVEL' : undefined;
  await orExit(() => serve(withToken, log, { out: (line) => process.stdout.write(`${line}\n`) }, { engine, from, levelFixedBy, finish: (next) => ensureToken(next, { log }) }));
}
