import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { collect, configOption, pairs } from './arguments.js';
import { compile } from './config.js';
import { fail } from './exit.js';
import { dryRunModule } from './modules.js';

interface TestOptions {
  payload?: string;
  method: string;
  config?: string;
  header: string[];
  query: string[];
}

/** `hookrelay test NAME`: the dry run — the action POST {path}/NAME would produce, as JSON; dispatches nothing. */
export function testCommand(program: Command): void {
  program
    .command('test')
    .description('dry run: resolve POST {path}/NAME (or GET) against a payload and print the resulting action, or the mapping\'s own answer, with the status the listener would answer, as JSON; dispatches nothing')
    .argument('<name>', 'the hook name, i.e. the NAME in POST {hooks.path}/NAME')
    .option('-p, --payload <file>', 'the request body, read as the listener reads it: JSON, or form data with --header content-type=application/x-www-form-urlencoded (required with POST)')
    .option('-X, --method <method>', 'POST, or GET for a mapping with match.method: GET (its payload is the --query)', 'POST')
    .addOption(configOption())
    .option('-H, --header <k=v>', 'a request header (repeatable)', collect, [])
    .option('-q, --query <k=v>', 'a query parameter (repeatable)', collect, [])
    .action(testAction);
}

async function testAction(name: string, opts: TestOptions): Promise<void> {
  const { loaded, engine } = await compile(opts.config);
  const { dryRun, DryRunProblem } = await dryRunModule();
  const headers = pairs(opts.header, '--header', (k) => k.toLowerCase());
  const method = opts.method.toUpperCase();
  if (method !== 'GET' && method !== 'POST') fail(`--method ${opts.method}: give POST or GET`);
  if (method === 'POST' && opts.payload === undefined) fail('--payload FILE is required (a POST has a body; a GET\'s payload is its --query)');
  let bytes = Buffer.alloc(0);
  try {
    if (opts.payload !== undefined) bytes = readFileSync(opts.payload);
  } catch (e) {
    fail(`--payload ${opts.payload}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  try {
    const query = new URLSearchParams(pairs(opts.query, '--query')).toString();
    const out = await dryRun(engine, loaded.config.hooks.path, { name, method, body: bytes, headers, query, now: new Date() }, { acceptStatus: loaded.config.hooks.acceptStatus });
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
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
