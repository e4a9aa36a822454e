import type { Command } from 'commander';
import { EVENTS_LIMIT } from '../http/limits.js';
import { configOption, toInt, toLimit } from './arguments.js';
import { cutAt, printableJson } from '../printable.js';
import { createTable, noneFound } from './table.js';
import { withStoreReader } from './config.js';

interface EventsOptions {
  config?: string;
  after: number;
  limit: number;
  follow?: boolean;
  json?: boolean;
  full?: boolean;
}

/** Characters of an event's text the human output shows (a 200 KB wake filled the terminal). */
const SHOWN = 200;

/** `hookrelay events`: the main session's events from the store, paged, or followed. */
export function eventsCommand(program: Command): void {
  program
    .command('events')
    .description("print the main session's events (wake, summary, reply) from the store")
    .addOption(configOption())
    .option('--after <seq>', 'only events after this sequence number', toInt, 0)
    .option('--limit <n>', `at most this many per page (1–${EVENTS_LIMIT.max})`, toLimit(EVENTS_LIMIT.max), EVENTS_LIMIT.default)
    .option('-f, --follow', 'keep printing new events as they arrive (Ctrl-C to stop)')
    .option('--full', `show whole texts (without it, a text past ${SHOWN} characters is cut, saying how many more there are)`)
    .option('--json', 'one JSON object per line, with the whole text: {seq, id, kind, text, source, at}, as GET {hooks.path}/events answers')
    .action(eventsAction);
}

/** The first {@link SHOWN} characters of `text`, and how many more there are. */
function shortText(text: string): string {
  if (text.length <= SHOWN) return text;
  const n = cutAt(text, SHOWN);
  return `${text.slice(0, n)}… (${text.length - n} more characters; --full shows all)`;
}

async function eventsAction(opts: EventsOptions): Promise<void> {
  await withStoreReader(opts.config, async (store) => {
    const table = createTable(['SEQ', 'TIME', 'KIND', 'SOURCE', 'TEXT']);
    let after: number = opts.after;
    // Until a row is printed or the list is said to be empty.
    let none = true;
    for (;;) {
      const events = await store.listEvents(after, opts.limit);
      if (opts.json) for (const e of events) process.stdout.write(`${printableJson({ seq: e.seq, id: e.id, kind: e.kind, text: e.text, source: e.source, at: e.at })}\n`);
      else table.print(events.map((e) => [`#${e.seq}`, e.at, { text: e.kind, paint: e.kind === 'wake' ? undefined : 'dim' as const }, e.source, opts.full ? e.text : shortText(e.text)]));
      if (events.length > 0) {
        after = events[events.length - 1]!.seq;
        none = false;
      }
      if (events.length === opts.limit) continue;
      if (none && !opts.json) noneFound(`No events${opts.after > 0 ? ` after #${opts.after}` : ''}${opts.follow ? ' yet; waiting for new ones (Ctrl-C to stop)' : '.'}`);
      none = false;
      if (!opts.follow) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
  });
}
