import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { sign } from '@octokit/webhooks-methods';
import examples from '@octokit/webhooks-examples' with { type: 'json' };
import { call, tmpDir, until } from '../../support/gateway.js';
import { runCli } from '../../support/cli.js';
import { emailBatch } from '../../support/email-batch.js';
import { startInProcess, TOKEN } from '../../support/in-process.js';
import Database from 'better-sqlite3';
import { DB_FILE } from '../../../src/store/sqlite.js';
import { blocks } from '../../support/markdown.js';
import { REQUEST_LOG } from '../../support/request-log-sql.js';

const SECRET = 'diff-spec-github-secret-0123456789';
const BEFORE = { file: 'docs/testing-mappings.md', heading: '## Before you change a mapping: `hookrelay diff`' };

/** GitHub's own example payload of `event` (@octokit/webhooks-examples), the `index`th. */
function example(event: string, index = 0): Record<string, unknown> {
  const found = (examples as unknown as { name: string; examples: Record<string, unknown>[] }[]).find((e) => e.name === event);
  return found!.examples[index]!;
}

/**
 * docs/testing-mappings.md's worked example, run: real GitHub deliveries and an e-mail preset
 * batch captured by a gateway on the doc's config, then `hookrelay diff` against the doc's new
 * config must print exactly what the doc shows.
 */
describe('cli: hookrelay diff (the last kept requests through the current config and a new one)', function () {
  this.timeout(120000);
  const dir = tmpDir();
  const [current, next] = blocks(BEFORE, 'yaml');
  const [shown] = blocks(BEFORE, 'text');
  const env = { HOOKRELAY_TOKEN: TOKEN, GITHUB_WEBHOOK_SECRET: SECRET };
  const currentFile = path.join(dir, 'hookrelay.yaml');
  const nextFile = path.join(dir, 'hookrelay.new.yaml');
  const count = (table: string) => countRows(dir, table);
  let rowsBefore: number;

  before(async () => {
    fs.writeFileSync(currentFile, current!);
    fs.writeFileSync(nextFile, next!);
    const raw = YAML.parse(current!.replaceAll('${HOOKRELAY_TOKEN}', TOKEN).replaceAll('${GITHUB_WEBHOOK_SECRET}', SECRET));
    const gw = await startInProcess(raw, dir);
    try {
      let delivery = 0;
      const github = async (event: string, body: Record<string, unknown>, status: number) => {
        const text = JSON.stringify(body);
        const r = await call(`${gw.hooks}/github`, { token: TOKEN, raw: text, headers: {
          'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': `72d3162e-cc78-11e3-81ab-4c9367dc095${++delivery}`, 'x-hub-signature-256': await sign(SECRET, text),
        } });
        expect(r.status, r.text).to.equal(status);
      };
      // One at a time, each row stored before the next request: the log's seq is the order sent.
      const logged = async (n: number, send: () => Promise<void>) => {
        await send();
        await until(`request-log row ${n}`, () => countRows(dir, REQUEST_LOG) === n, 10_000);
      };
      await logged(1, () => github('push', example('push', 0), 202));
      await logged(2, () => github('push', example('push', 4), 202));
      await logged(3, () => github('ping', example('ping'), 404));
      await logged(4, () => github('issues', example('issues'), 404));
      await logged(5, async () => {
        const r = await call(`${gw.hooks}/email`, { token: TOKEN, json: emailBatch(2, 'diff') });
        expect(r.status, r.text).to.equal(202);
      });
    } finally {
      await gw.stop();
    }
    rowsBefore = countRows(dir, REQUEST_LOG);
  });

  it('prints what docs/testing-mappings.md shows: one line per changed outcome, then the counts; exit 1', async () => {
    const r = await runCli(['diff', nextFile, '--config', currentFile], env);
    expect(r.stderr).to.equal('');
    expect(r.stdout).to.equal(shown);
    expect(r.code).to.equal(1);
  });

  it('dispatches nothing and changes nothing: no new request-log row, run or event', async () => {
    const runs = count('runs');
    const events = count('events');
    await runCli(['diff', nextFile, '--config', currentFile], env);
    expect(countRows(dir, REQUEST_LOG)).to.equal(rowsBefore);
    expect(count('runs')).to.equal(runs);
    expect(count('events')).to.equal(events);
  });

  it('the same config: every request the same, exit 0; --limit takes the newest N', async () => {
    const same = await runCli(['diff', currentFile, '--config', currentFile], env);
    expect(same.code, same.stderr).to.equal(0);
    expect(same.stdout).to.equal('5 same, 0 changed, 0 newly unmatched, 0 newly matched\n');
    const two = await runCli(['diff', nextFile, '--config', currentFile, '--limit', '2'], env);
    expect(two.stdout.trim().split('\n').map((l) => l.split(':')[0])).to.deep.equal(['#5 POST /hooks/email', '1 same, 1 changed, 0 newly unmatched, 0 newly matched']);
  });

  it('an invalid NEW: its problems as check lists them, exit 2; nothing compared', async () => {
    const broken = path.join(dir, 'broken.yaml');
    fs.writeFileSync(broken, next!.replace('action: wake', 'action: wakes').replace('{{messages.length}}', '{{#if}}'));
    const r = await runCli(['diff', broken, '--config', currentFile], env);
    expect(r.code).to.equal(2);
    expect(r.stdout).to.equal('');
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).to.equal(`hookrelay: the new config ${broken} is invalid:`);
    expect(lines.slice(1).some((l) => l.startsWith('hooks.mappings[2].action: '))).to.equal(true);
  });
});

/** Rows of `table` in the doc config's store (dataDir ./.hookrelay), read beside the gateway. */
function countRows(dir: string, table: string): number {
  const db = new Database(path.join(dir, '.hookrelay', DB_FILE), { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}
