import type { Command } from 'commander';
import { configOption, toLimit } from './arguments.js';
import { printableJson } from '../printable.js';
import { createTable, noneFound, type Paint } from './table.js';
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
    const rows = await store.listRequests({ limit: opts.limit });
    if (opts.json) {
      for (const r of rows) process.stdout.write(`${printableJson(r)}\n`);
      return;
    }
    if (rows.length === 0) return noneFound('No requests in the request log.');
    createTable(['SEQ', 'TIME', 'METHOD', 'ROUTE', 'STATUS', 'SENDER', 'NOTES']).print(rows.map((r) => {
      // A listing reads no bodies (`hookrelay fixture SEQ` writes one out); `bodyUntil` says one is kept.
      const notes = [r.error, ...(r.failures ?? []).map(failureText), r.replayOf !== undefined ? `replay of #${r.replayOf}` : undefined, r.bodyUntil !== undefined ? 'body kept' : undefined].filter(Boolean);
      return [`#${r.seq}`, r.at, r.method, r.route, { text: String(r.status), paint: STATUS_PAINT[Math.floor(r.status / 100)] }, r.sender ?? '-', notes.join(', ')];
    }));
  });
}

const STATUS_PAINT: Record<number, Paint> = { 2: 'green', 3: 'green', 4: 'yellow', 5: 'red' };
