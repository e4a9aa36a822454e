import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopSharedCluster } from './postgres.js';

/**
 * Mocha's global fixtures (https://mochajs.org/#global-fixtures): every spec (and every process
 * a spec starts) makes its temporary files under one folder of this run, by pointing TMPDIR
 * there; the folder goes when the run ends, so `npm test` leaves nothing behind in the machine's
 * temp folder. With `--parallel` the workers inherit TMPDIR from the main process, and the
 * teardown runs there once, after they have ended. A PostgreSQL cluster that the specs started
 * (spec/support/postgres.ts) lives there too, and is stopped first (a worker's own stops when
 * the worker exits).
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
