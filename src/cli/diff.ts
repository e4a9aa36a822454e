import type { Command } from 'commander';
import { configOption, toLimit } from './arguments.js';
import { FIXTURE_READS } from './config.js';
import { printable } from '../printable.js';

/** `--limit` of `hookrelay diff`: CONTRACT.md §16's default. */
const DIFF_LIMIT = { default: 500, max: 10_000 } as const;

interface DiffOptions {
  config?: string;
  limit: number;
}

/** `hookrelay diff NEW.yaml`: the last kept requests through the current config and NEW, each changed outcome a line (CONTRACT.md §16). */
export function diffCommand(program: Command): void {
  program
    .command('diff')
    .description('run the last kept requests (hooks.keepBodies) through the dry run of the current config and of NEW, and print each request whose outcome changes, then the counts; dispatches nothing, changes nothing. Exit 0 none changed, 1 some did, 2 a config is invalid')
    .argument('<new>', 'the config to compare with the current one (YAML or JSON)')
    .addOption(configOption())
    .option('--limit <n>', `the last this many kept requests (1–${DIFF_LIMIT.max})`, toLimit(DIFF_LIMIT.max), DIFF_LIMIT.default)
    .action(diffAction);
}

async function diffAction(newFile: string, opts: DiffOptions): Promise<void> {
  const [{ readConfig, configSource }, { compileConfig }, { ConfigError }, { StoreError }, { openStoreReadOnly }, { fixtureContext }, diff] = await Promise.all([
    import('../config/load.js'), import('../compile-config.js'), import('../config/errors.js'), import('../store/store.js'),
    import('../store/open.js'), import('../fixtures/run-fixture.js'), import('../fixtures/diff.js'),
  ]);
  // One stand-in for the ids a request draws (a session key's uuid): both sides draw the same, so only the configs differ.
  const engineOpts = { uuid: () => '00000000-0000-7000-8000-000000000000' };
  const compiled = async (file: string, which: string) => {
    try {
      return await compileConfig(readConfig(file), file, process.env, engineOpts, FIXTURE_READS);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      // As `check` lists them, one problem a line with its YAML path.
      process.stderr.write(`hookrelay: ${which} ${file} is invalid:\n`);
      for (const p of e.problems) process.stderr.write(`${p.path}: ${p.message}\n`);
      process.exit(2);
    }
  };
  const current = await compiled(configSource(opts.config).file, 'the current config');
  const next = await compiled(newFile, 'the new config');
  try {
    const store = await openStoreReadOnly(current.loaded.config); // read-only: works beside a running server
    const now = new Date();
    const hooksPath = current.loaded.config.hooks.path;
    const rows = await diff.keptRequests(store, hooksPath, opts.limit).finally(() => store.close());
    const report = await diff.diffRequests(fixtureContext(current.loaded.config, current.engine, () => now), fixtureContext(next.loaded.config, next.engine, () => now), rows);
    // Values may come from a sender's payload.
    for (const line of report.lines) process.stdout.write(`${printable(diff.diffLineText(line))}\n`);
    process.stdout.write(`${diff.diffCountsText(report)}\n`);
    if (rows.length === 0) process.stderr.write('note: no kept requests to compare: the request log keeps bodies with hooks.keepBodies (days)\n');
    if (report.lines.length > 0) process.exitCode = 1;
  } catch (e) {
    if (!(e instanceof StoreError)) throw e;
    process.stderr.write(`hookrelay: ${e.message}\n`);
    process.exit(2);
  } finally {
    await Promise.all([current.engine.close(), next.engine.close()]);
  }
}
