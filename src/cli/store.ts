import type { Command } from 'commander';
import { configOption } from './arguments.js';
import { loadStore } from './config.js';
import { orExit } from './exit.js';

/** `hookrelay store copy`: everything from one store into another, empty one (CONTRACT.md §10); `store vacuum`: store/vacuum.ts. */
export function storeCommand(program: Command): void {
  const store = program.command('store').description('work on the store itself');
  store
    .command('copy')
    .description('copy events, runs, conversations, the outbox, idempotency keys, state, and paused mappings with the wakes they hold from one store to another, empty one (e.g. SQLite → PostgreSQL); stop the servers of both first')
    .requiredOption('--from <file>', 'config file of the store to copy from')
    .requiredOption('--to <file>', 'config file of the store to copy into (it must be empty)')
    .action(copyAction);
  store
    .command('vacuum')
    .description('give a SQLite store\'s free space back to the disk, and have it give back what later purges free as they go (needed once for a store made before hookrelay did this); stop its server first')
    .addOption(configOption())
    .action(vacuumAction);
}

async function vacuumAction(opts: { config?: string }): Promise<void> {
  const loaded = await loadStore(opts.config);
  const { vacuumStore } = await import('../store/vacuum.js');
  const { before, after } = await orExit(async () => vacuumStore(loaded.config));
  process.stdout.write(`vacuumed: ${before} → ${after} bytes\n`);
}

async function copyAction(opts: { from: string; to: string }): Promise<void> {
  const [from, to] = [await loadStore(opts.from), await loadStore(opts.to)];
  const { copyStore } = await import('../store/copy.js');
  const counts = await orExit(() => copyStore(from.config, to.config, (line) => process.stdout.write(`${line}\n`)));
  process.stdout.write(`copied: ${Object.entries(counts).map(([t, n]) => `${n} ${t}`).join(', ')}\n`);
}
