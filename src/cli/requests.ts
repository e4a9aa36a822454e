import type { Command } from 'commander';
import { configOption, toLimit } from './arguments.js';
import { printable, printableJson } from '../printable.js';
import { withStoreReader } from './config.js';
import { failureText } from '../failure.js';

/** `--limit` of `hookrelay requests`: the console's page is 50; the log keeps every request of store.retainDays. */
const REQUESTS_LIMIT = { default: 50, max: 1000 } as const;

interface RequestsOptions {
  config?: string;
  limit: number;
  json?: boolean;
}

/** `hookrelay requests`: the request log from the store, newest first (CONTRACT.md §13). */
export function requestsCommand(program: Command): void {
  program
    .command('requests')
    .description('list the request log, newest first: seq, time, route or mapping, status, sender (the token\'s name)')
    .addOption(configOption())
    .option('--limit <n>', `at most this many (1–${REQUESTS_LIMIT.max})`, toLimit(REQUESTS_LIMIT.max), REQUESTS_LIMIT.default)
    .option('--json', 'one JSON object per line (bodies are not listed)')
    .action(requestsAction);
}

async function requestsAction(opts: RequestsOptions): Promise<void> {
  await withStoreReader(opts.config, async (store) => {
    for (const r of await store.listRequests({ limit: opts.limit })) {
      // A listing reads no bodies (`hookrelay fixture SEQ` writes one out); `bodyUntil` says one is kept.
      const marks = [r.error, ...(r.failures ?? []).map(failureText), r.replayOf !== undefined ? `replay of #${r.replayOf}` : undefined, r.bodyUntil !== undefined ? 'body kept' : undefined].filter(Boolean);
      process.stdout.write(opts.json ? `${printableJson(r)}\n`
        : `${printable(`#${r.seq} ${r.at} ${r.method} ${r.route} ${r.status}${r.sender === undefined ? '' : ` [${r.sender}]`}${marks.length ? ` (${marks.join(', ')})` : ''}`)}\n`);
    }
  });
}
