import type { Command } from 'commander';
import { EVENTS_LIMIT } from '../http/limits.js';
import { configOption, toInt, toLimit } from './arguments.js';
import { loadStore } from './config.js';
import { orExitAsync } from './exit.js';
import { printableModule, storeModule } from './modules.js';

interface EventsOptions {
  config?: string;
  after: number;
  limit: number;
  follow?: boolean;
  json?: boolean;
}

/** `hookrelay events`: the main session's events from the store, paged, or followed. */
export function eventsCommand(program: Command): void {
  program
    .command('events')
    .description("print the main session's events (wake, summary, reply) from the store")
    .addOption(configOption())
    .option('--after <seq>', 'only events after this sequence number', toInt, 0)
    .option('--limit <n>', `at most this many per page (1–${EVENTS_LIMIT.max})`, (v) => toLimit(v, EVENTS_LIMIT.max), EVENTS_LIMIT.default)
    .option('-f, --follow', 'keep printing new events as they arrive (Ctrl-C to stop)')
    .option('--json', 'one JSON object per line')
    .action(eventsAction);
}

async function eventsAction(opts: EventsOptions): Promise<void> {
  const loaded = await loadStore(opts.config);
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
}
