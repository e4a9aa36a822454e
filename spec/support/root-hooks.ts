import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopSharedCluster } from './postgres.js';

/**
 * Mocha root hooks: every spec (and every process a spec starts) makes its temporary files
 * under one folder of this run, by pointing TMPDIR there; the folder goes when the run ends,
 * so `npm test` leaves nothing behind in the machine's temp folder. A PostgreSQL cluster that
 * the specs started (spec/support/postgres.ts) lives there too, and is stopped first.
 */
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-test-'));
const previous = process.env.TMPDIR;
// Set when this file loads, before any spec file does (some make folders at load time).
process.env.TMPDIR = root;

export const mochaHooks = {
  async afterAll(): Promise<void> {
    await stopSharedCluster();
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    fs.rmSync(root, { recursive: true, force: true });
  },
};
