import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { collect, configOption, pairs } from './arguments.js';
import { compile } from './config.js';
import { fail } from './exit.js';
import { dryRunModule } from './modules.js';

interface TestOptions {
  payload: string;
  config?: string;
  header: string[];
  query: string[];
  pretty?: boolean;
}

/** `hookrelay test NAME`: the dry run — the action POST {path}/NAME would produce, as JSON; dispatches nothing. */
export function testCommand(program: Command): void {
  program
    .command('test')
    .description('dry run: resolve POST {path}/NAME against a payload and print the resulting action as one line of JSON; dispatches nothing')
    .argument('<name>', 'the hook name, i.e. the NAME in POST {hooks.path}/NAME')
    .requiredOption('-p, --payload <file>', 'the request body, read as the listener reads it: JSON, or form data with --header content-type=application/x-www-form-urlencoded')
    .addOption(configOption())
    .option('-H, --header <k=v>', 'a request header (repeatable)', collect, [])
    .option('-q, --query <k=v>', 'a query parameter (repeatable)', collect, [])
    .option('--pretty', 'indent the JSON (default: one line, for scripts and diffs)')
    .action(testAction);
}

async function testAction(name: string, opts: TestOptions): Promise<void> {
  const { loaded, engine } = await compile(opts.config);
  const { dryRun, DryRunProblem } = await dryRunModule();
  const headers = pairs(opts.header, '--header', (k) => k.toLowerCase());
  let bytes: Buffer;
  try {
    bytes = readFileSync(opts.payload);
  } catch (e) {
    fail(`--payload ${opts.payload}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  try {
    const query = new URLSearchParams(pairs(opts.query, '--query')).toString();
    const out = await dryRun(engine, loaded.config.hooks.path, { name, body: bytes, headers, query, now: new Date() });
    process.stdout.write(`${JSON.stringify(out, null, opts.pretty ? 2 : undefined)}\n`);
  } catch (e) {
    if (!(e instanceof DryRunProblem)) throw e;
    // The author's own tool: the cause of a failing template or transform, stack and
    // all, is what they need (the listener only logs it, at debug level).
    for (let cause = e.cause; cause !== undefined; cause = (cause as Error)?.cause) {
      process.stderr.write(`cause: ${cause instanceof Error ? cause.stack ?? String(cause) : String(cause)}\n`);
    }
    fail(e.stage === 'payload' ? `--payload ${opts.payload}: ${e.message}` : e.message);
  } finally {
    await engine.close(); // fail() exits at once: its workers end with the process
  }
}
