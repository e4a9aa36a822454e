import type { Command } from 'commander';
import type { Config } from '../config/types.js';
import { configOption } from './arguments.js';
import { compile } from './config.js';
import { orExit } from './exit.js';

/** `hookrelay check`: validate and compile everything; exit 1 listing each problem with its YAML path. */
export function checkCommand(program: Command): void {
  program
    .command('check')
    .description('validate the config, compile every template and load every transform; exit 1 listing each problem')
    .addOption(configOption())
    .action(checkAction);
}

async function checkAction(opts: { config?: string }): Promise<void> {
  const { loaded, engine } = await compile(opts.config);
  await engine.close();
  const { ensureToken } = await import('../config/token.js');
  orExit(() => ensureToken(loaded, { dryRun: true }));
  const { configWarnings } = await import('../config/warnings.js');
  for (const line of configWarnings(loaded.config)) process.stderr.write(`warning: ${line}\n`);
  const n = loaded.config.hooks.mappings.length;
  process.stdout.write(`ok: ${loaded.file} is valid (${n} mapping${n === 1 ? '' : 's'}: ${engine.mappings.join(', ') || 'none'})\n`);
  process.stdout.write(`${servedAt(loaded.config)}\n`);
}

/** What `serve` will answer where: the hooks, the console and `/metrics` (behind the admin token), or that they are off. */
function servedAt(config: Config): string {
  const { host, port } = config.server;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const hooksAt = config.hooks.enabled ? `hooks at ${base}${config.hooks.path} (sending: the hooks token; reading events and runs: the admin token)` : 'hooks disabled (hooks.enabled: false)';
  const consoleAt = config.server.console ? `console at ${base}/console/` : 'console off (server.console: false)';
  const metricsAt = config.server.metrics ? `metrics at ${base}/metrics` : 'metrics off (server.metrics: false)';
  return `serves: ${hooksAt}, ${consoleAt}, ${metricsAt} (behind the admin token)`;
}
