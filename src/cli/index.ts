import { Command } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { checkCommand } from './check.js';
import { diffCommand } from './diff.js';
import { emailCommand } from './email.js';
import { eventsCommand } from './events.js';
import { fixtureCommand } from './fixture.js';
import { requestsCommand } from './requests.js';
import { pauseCommands } from './pause.js';
import { runsCommand } from './runs.js';
import { serveCommand } from './serve.js';
import { storeCommand } from './store.js';
import { testCommand } from './test.js';

/** The only reader of argv and the environment (STYLE.md); one file per command, listed in `--help` order. Each command imports what it needs when it runs: `--help` and `check` load no Koa, SQLite or model client. */
export async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name('hookrelay')
    .description('Self-hosted webhook gateway for AI agents: JSON POSTs become wake events or agent turns.')
    .version(pkg.version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)');

  serveCommand(program);
  checkCommand(program);
  testCommand(program);
  emailCommand(program);
  eventsCommand(program);
  runsCommand(program);
  requestsCommand(program);
  fixtureCommand(program);
  diffCommand(program);
  storeCommand(program);
  pauseCommands(program);

  await program.parseAsync(argv);
}
