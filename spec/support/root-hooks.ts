import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context, Suite } from 'mocha';
import { stopSharedCluster } from './postgres.js';

/**
 * Mocha's global fixtures (https://mochajs.org/#global-fixtures): the specs and what they start
 * make their temporary files in one folder of this run (TMPDIR; `--parallel` workers inherit
 * it), removed with the PostgreSQL cluster the specs started once the run has ended.
 */
const worker = process.env.MOCHA_WORKER_ID !== undefined;
const previous = process.env.TMPDIR;
const root = worker ? os.tmpdir() : fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-test-'));
// Set when this file loads, before any spec file does (some make folders at load time).
process.env.TMPDIR = root;

export async function mochaGlobalTeardown(): Promise<void> {
  await stopSharedCluster();
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  fs.rmSync(root, { recursive: true, force: true });
}

/**
 * The e-mail specs that fill the spec user's mailboxes share one account on the dovecot of
 * IMAP_SPEC_ADDRESS: one at a time. Without it each worker has its own IMAP server (servers/imap.ts).
 */
const ONE_AT_A_TIME = process.env.IMAP_SPEC_ADDRESS ? /[/\\]spec[/\\]email[/\\]email-(run|trust)\.spec\.ts$/ : undefined;
const LOCK = path.join(root, 'email-specs.lock');
let holding = false;

const isExclusive = (suite: Suite): boolean => !!ONE_AT_A_TIME?.test(suite.file ?? '') || suite.suites.some(isExclusive);

/**
 * With SPEC_TIMES=FILE each worker appends to FILE, per spec file: ms taken, CPU ms (its threads and
 * reaped children, https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html), path; with
 * SPEC_TEST_TIMES=FILE, the same per test, and its title.
 */
const TIMES = process.env.SPEC_TIMES;
const TEST_TIMES = process.env.SPEC_TEST_TIMES;
let started = 0;
let cpuAtStart = 0;
let testStarted = [0, 0];

/** utime + stime + cutime + cstime of this process, in ms (Linux; 0 elsewhere). */
function cpuMs(): number {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /s, '').split(' ');
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
  } catch {
    return 0;
  }
}

/** In a `--parallel` worker root hooks run around each file (https://mochajs.org/#root-hook-plugins). */
export const mochaHooks = worker ? {
  async beforeAll(this: Context): Promise<void> {
    if (isExclusive(this.test!.parent!)) await lock(this);
    started = Date.now();
    if (TIMES) cpuAtStart = cpuMs();
  },
  beforeEach(): void {
    if (TEST_TIMES) testStarted = [Date.now(), cpuMs()];
  },
  afterEach(this: Context): void {
    const test = this.currentTest;
    if (TEST_TIMES) fs.appendFileSync(TEST_TIMES, `${Date.now() - testStarted[0]!}\t${cpuMs() - testStarted[1]!}\t${test?.file ?? '?'}\t${test?.fullTitle()}\n`);
  },
  afterAll(this: Context): void {
    if (TIMES) fs.appendFileSync(TIMES, `${Date.now() - started}\t${cpuMs() - cpuAtStart}\t${this.test?.parent?.suites[0]?.file ?? '?'}\n`);
    if (holding) fs.rmdirSync(LOCK);
    holding = false;
  },
} : {};

async function lock(ctx: Context): Promise<void> {
  ctx.timeout(0);
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      holding = true;
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
