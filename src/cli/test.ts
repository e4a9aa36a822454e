import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { collect, configOption, pairs } from './arguments.js';
import { compile } from './config.js';
import { fail } from './exit.js';
import { printable } from '../printable.js';
import type { Explanation } from '../match-explanation.js';
import { causeText } from '../failure.js';
import { colourOn, painted } from './table.js';

interface TestOptions {
  payload?: string;
  fixtures?: string;
  method: string;
  config?: string;
  header: string[];
  query: string[];
  pretty?: boolean;
  explain?: boolean;
}

/** `hookrelay test NAME` and `test --fixtures DIR`: the dry run, dispatching nothing (CONTRACT.md §13). */
export function testCommand(program: Command): void {
  program
    .command('test')
    .description('dry run: resolve POST {path}/NAME (or GET) against a payload and print the resulting action, or the mapping\'s own answer, with the status the listener would answer, as one line of JSON; dispatches nothing. With --fixtures DIR: check every fixture in DIR')
    .argument('[name]', 'the hook name, i.e. the NAME in POST {hooks.path}/NAME')
    .option('-p, --payload <file>', 'the request body, read as the listener reads it: JSON, or form data with --header content-type=application/x-www-form-urlencoded (required with POST)')
    .option('-X, --method <method>', 'POST, or GET for a mapping with match.method: GET (its payload is the --query)', 'POST')
    .option('--fixtures <dir>', 'run every fixture (*.json, *.yaml, *.yml) in this folder and print one line each; exit 1 when any failed')
    .addOption(configOption())
    .option('-H, --header <k=v>', 'a request header (repeatable)', collect, [])
    .option('-q, --query <k=v>', 'a query parameter (repeatable)', collect, [])
    .option('--pretty', 'indent the JSON (default: one line, for scripts and diffs)')
    .option('--explain', 'say on stderr, for every mapping on the path in order, whether it matched or the first condition that failed (method, source, a header, when); a request no mapping takes is always explained')
    .action(testAction);
}

async function testAction(name: string | undefined, opts: TestOptions): Promise<void> {
  if (opts.fixtures !== undefined) {
    if (name !== undefined || opts.payload !== undefined || opts.header.length > 0 || opts.query.length > 0) {
      fail('--fixtures runs the requests of the fixture files: give no NAME, --payload, --header or --query with it');
    }
    return fixturesAction(opts.fixtures, opts.config);
  }
  if (name === undefined) fail('give the NAME of a hook (or --fixtures DIR)');
  const { loaded, engine } = await compile(opts.config);
  const [{ dryRun, DryRunProblem }, { explanationLines }] = await Promise.all([import('../dry-run.js'), import('../match-explanation.js')]);
  const headers = pairs(opts.header, '--header', (k) => k.toLowerCase());
  const method = opts.method.toUpperCase();
  if (method !== 'GET' && method !== 'POST') fail(`--method ${opts.method}: give POST or GET`);
  const explained = (e: Explanation) => {
    // On stderr: stdout stays the one line of JSON.
    const target = `${method} ${loaded.config.hooks.path}/${name}`;
    process.stderr.write(e.mappings === 0 ? `explain: no mapping takes ${target}\n` : `explain: ${target} has ${e.mappings} mapping${e.mappings === 1 ? '' : 's'}, in match order:\n`);
    for (const line of explanationLines(e)) process.stderr.write(`  ${printable(line)}\n`);
  };
  if (method === 'POST' && opts.payload === undefined) fail('--payload FILE is required (a POST has a body; a GET\'s payload is its --query)');
  let bytes = Buffer.alloc(0);
  try {
    if (opts.payload !== undefined) bytes = readFileSync(opts.payload);
  } catch (e) {
    fail(`--payload ${opts.payload}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  try {
    const query = new URLSearchParams(pairs(opts.query, '--query')).toString();
    const out = await dryRun(engine, loaded.config.hooks.path, { name, method, body: bytes, headers, query, now: new Date(), explain: opts.explain === true });
    if (out.explanation) {
      explained(out.explanation as Explanation);
      delete out.explanation;
    }
    const { tokenWarning } = await import('../fixtures/run-fixture.js');
    const warning = tokenWarning({ mappings: loaded.config.hooks.mappings, hooksPath: loaded.config.hooks.path }, name, method, out.mapping as string);
    if (warning) out.warnings = [...((out.warnings as string[] | undefined) ?? []), warning];
    process.stdout.write(`${JSON.stringify(out, null, opts.pretty ? 2 : undefined)}\n`);
  } catch (e) {
    if (!(e instanceof DryRunProblem)) throw e;
    if (e.explanation) explained(e.explanation);
    const f = e.failure;
    if (f) {
      // The author's own tool and payload: the cause as thrown, with where it arose (the listener
      // leaves payload data out of it), and a transform's stack.
      const { failureOf } = await import('../engine/failure.js');
      process.stderr.write(`cause: ${causeText(failureOf(f.mappingId, f.step, e.cause))}\n`);
      const stack = e.cause instanceof Error && f.step.startsWith('transform') ? e.cause.stack?.split('\n').filter((l) => /^\s+at /.test(l)) : undefined;
      for (const line of stack ?? []) process.stderr.write(`${line}\n`);
      fail(`${e.code}: mapping "${f.mappingId}": ${f.step} failed`);
    }
    fail(e.stage === 'payload' ? `--payload ${opts.payload}: ${e.message}` : e.message);
  } finally {
    await engine.close(); // fail() exits at once: its workers end with the process
  }
}

const MARKS = { passed: ['✓', 'green'], failed: ['✗', 'red'], skipped: ['-', 'dim'] } as const;

/** `test --fixtures DIR`: one line per fixture, then the counts; exit 1 when any failed. */
async function fixturesAction(dir: string, config: string | undefined): Promise<void> {
  const { loaded, engine } = await compile(config);
  const [{ readFixtureDir }, { checkFixtures, fixtureContext }] = await Promise.all([import('../fixtures/fixture-file.js'), import('../fixtures/run-fixture.js')]);
  let files;
  try {
    files = readFixtureDir(dir);
  } catch (e) {
    fail(`--fixtures ${dir}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (e as Error).message}`);
  }
  if (files.length === 0) fail(`--fixtures ${dir}: no fixture files (*.json, *.yaml, *.yml) in it`);
  const results = await checkFixtures(fixtureContext(loaded.config, engine), files).finally(() => engine.close());
  const count = (v: keyof typeof MARKS) => results.filter((r) => r.verdict === v).length;
  const on = colourOn();
  for (const r of results) {
    const why = r.verdict === 'failed' ? ` — ${r.why}` : r.verdict === 'skipped' ? ` (skipped: ${r.why})` : '';
    const [mark, paint] = MARKS[r.verdict];
    // Names and values may come from a sender's payload (a fixture made from the request log).
    process.stdout.write(`${painted(mark, paint, on)} ${printable(`${r.name}${why}`)}\n`);
    for (const w of r.warnings ?? []) process.stdout.write(`  ${painted('warning:', 'yellow', on)} ${printable(w)}\n`);
  }
  const skipped = count('skipped');
  const failed = count('failed');
  process.stdout.write(`${count('passed')} passed, ${painted(`${failed} failed`, failed > 0 ? 'red' : undefined, on)}${skipped ? `, ${skipped} skipped` : ''}\n`);
  if (failed > 0) process.exitCode = 1;
}
