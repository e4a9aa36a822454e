import { Option, type Command } from 'commander';
import { RUNS_LIMIT } from '../http/limits.js';
import type { RunStatus } from '../store/records.js';
import { configOption, toLimit } from './arguments.js';
import { printable, printableJson } from '../printable.js';
import { withStoreReader } from './config.js';
import { fail } from './exit.js';
import { createTable, noneFound, type Paint } from './table.js';

const RUN_PAINT: Record<RunStatus, Paint> = { queued: 'dim', running: 'yellow', succeeded: 'green', failed: 'red', timed_out: 'red' };

interface RunsOptions {
  config?: string;
  limit: number;
  status?: RunStatus;
  before?: string;
  json?: boolean;
}

/** `hookrelay runs [ID]`: the agent runs from the store, newest first, or one run. */
export function runsCommand(program: Command): void {
  program
    .command('runs')
    .description('list agent runs (most recently accepted first), or show one run')
    .argument('[id]', 'a run id')
    .addOption(configOption())
    .option('--limit <n>', `at most this many (1–${RUNS_LIMIT.max})`, toLimit(RUNS_LIMIT.max), RUNS_LIMIT.default)
    .addOption(new Option('--status <status>', 'only runs in this state').choices(['queued', 'running', 'succeeded', 'failed', 'timed_out']))
    .option('--before <id>', 'only runs accepted before this one (page on with the last id listed)')
    .option('--json', 'JSON output')
    .action(runsAction);
}

async function runsAction(id: string | undefined, opts: RunsOptions): Promise<void> {
  await withStoreReader(opts.config, async (store) => {
    if (id !== undefined) {
      const run = await store.getRun(id);
      if (!run) fail(`no run with id ${printable(id)}`);
      process.stdout.write(`${printableJson(run, 2)}\n`);
      return;
    }
    if (opts.before !== undefined && !(await store.getRun(opts.before))) fail(`--before: no run with id ${printable(opts.before)}`);
    const runs = await store.listRuns({ limit: opts.limit, status: opts.status, before: opts.before });
    if (opts.json) {
      for (const r of runs) process.stdout.write(`${printableJson(r)}\n`);
      return;
    }
    if (runs.length === 0) {
      return noneFound(`No runs${opts.status ? ` with status ${opts.status}` : ''}${opts.before ? ` accepted before ${printable(opts.before)}` : ''}.`);
    }
    createTable(['RUN', 'STATUS', 'ACCEPTED', 'SESSION', 'NAME', 'DELIVERY', 'ERROR']).print(runs.map((r) => {
      const d = r.delivery;
      const f = r.forwarded;
      const delivery = [d && `${d.status} ${d.target} (${d.attempts} attempt${d.attempts === 1 ? '' : 's'})`, f && `forwarded ${f.status}${f.upstreamRunId ? ` upstream ${f.upstreamRunId}` : ''}`].filter(Boolean).join(', ') || '-';
      const error = r.error ? `${r.errorCode ? `[${r.errorCode}] ` : ''}${r.error}` : '-';
      return [r.runId, { text: r.status, paint: RUN_PAINT[r.status] }, r.createdAt, r.sessionKey, r.name || '-', delivery, error];
    }));
  });
}
