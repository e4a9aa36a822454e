import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
