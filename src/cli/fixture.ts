import { writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { collect, configOption, pairs, toInt } from './arguments.js';
import { compile, FIXTURE_READS } from './config.js';
import { fail, orExit } from './exit.js';

interface FixtureOptions {
  config?: string;
  out?: string;
  header: string[];
}

/** `hookrelay fixture SEQ`: a logged request as a fixture, credentials removed, today's outcome as its expectation (CONTRACT.md §13). */
export function fixtureCommand(program: Command): void {
  program
    .command('fixture')
    .description('write a logged request (its body kept with hooks.keepBodies) as a fixture for `test --fixtures`: credentials removed, what it comes to now as its expect')
    .argument('<seq>', 'the request\'s number in the request log (`hookrelay requests`)', toInt)
    .addOption(configOption())
    .option('-o, --out <file>', 'write the fixture to this file, as YAML when it ends in .yaml or .yml, else as JSON (default: JSON on standard output)')
    .option('-H, --header <k=v>', 'a header to add or override, e.g. x-github-event=push (rows logged before headers were kept have only Content-Type and User-Agent); repeatable', collect, [])
    .action(fixtureAction);
}

async function fixtureAction(seq: number, opts: FixtureOptions): Promise<void> {
  const { loaded, engine } = await compile(opts.config, { reads: FIXTURE_READS });
  const [{ openStoreReadOnly }, { fixtureOfRequest, fixtureText, unkeptMatchHeaders }, { fixtureContext, FixtureProblem }] =
    await Promise.all([import('../store/open.js'), import('../fixtures/from-request.js'), import('../fixtures/run-fixture.js')]);
  let text: string;
  let unkept: string[];
  try {
    const store = await orExit(() => openStoreReadOnly(loaded.config)); // read-only: works beside a running server
    const row = await store.getRequest(seq).finally(() => store.close());
    if (!row) fail(`no request #${seq} in the request log (see \`hookrelay requests\`; rows are purged after store.retainDays)`);
    const extra = pairs(opts.header, '--header', (k) => k.toLowerCase());
    const fixture = await fixtureOfRequest(fixtureContext(loaded.config, engine), row, extra);
    text = fixtureText(fixture, /\.ya?ml$/i.test(opts.out ?? '') ? 'yaml' : 'json');
    unkept = unkeptMatchHeaders(loaded.config.hooks.mappings, fixture.request.path).filter((h) => fixture.request.headers?.[h] === undefined);
  } catch (e) {
    if (e instanceof FixtureProblem) fail(e.message);
    throw e;
  } finally {
    await engine.close(); // fail() exits at once: its workers end with the process
  }
  if (unkept.length > 0) {
    // A row logged without its headers has only Content-Type and User-Agent: the sender's must be given again.
    process.stderr.write(`note: mappings on this path match the headers ${unkept.join(', ')}, which this request's row does not have: give them with --header (e.g. --header ${unkept[0]}=VALUE) so that the fixture and its expect have them\n`);
  }
  if (opts.out === undefined) {
    process.stdout.write(text);
    return;
  }
  try {
    writeFileSync(opts.out, text);
  } catch (e) {
    fail(`--out ${opts.out}: ${(e as Error).message}`);
  }
  process.stderr.write(`wrote ${opts.out}; run it with: hookrelay test --fixtures ${dirname(opts.out)}\n`);
}
