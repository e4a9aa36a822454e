import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'servers', 'postgres.sh');

/** A cluster of this run's own, started with servers/postgres.sh. */
export interface Cluster {
  url: string;
  stop(): Promise<void>;
  /** Starts it again after stop(), on the same port, with the same data. */
  start(): Promise<void>;
}

/**
 * Starts a throwaway cluster in a new folder of the run's temp folder (one `initdb`, ~2 s).
 * Fails, saying to install PostgreSQL, where it is not installed.
 */
export async function startCluster(): Promise<Cluster> {
  // The postgres user (the script runs the server as it when we are root) must reach the folder.
  traversable(tmpdir());
  const dir = join(mkdtempSync(join(tmpdir(), 'pg-')), 'cluster');
  traversable(dirname(dir));
  let out: string;
  try {
    out = (await run(SCRIPT, ['start', dir])).stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`cannot start a PostgreSQL server for the specs: ${(e.stderr || e.message).trim()}`);
  }
  const port = new URL(out).port;
  let running = true;
  // A run cut short (Ctrl-C, a crash) leaves no server behind either.
  const atExit = () => running && execFileSync(SCRIPT, ['stop', dir], { stdio: 'ignore' });
  process.once('exit', atExit);
  return {
    url: out,
    stop: async () => {
      await run(SCRIPT, ['stop', dir]);
      running = false;
    },
    start: async () => {
      await run(SCRIPT, ['start', dir, port]);
      running = true;
    },
  };
}

let shared: Promise<Cluster> | undefined;

/**
 * The server the PostgreSQL specs use: `HOOKRELAY_TEST_PG_URL` (CI starts one with
 * servers/postgres.sh), else a cluster started on first use and stopped by the root hook
 * (root-hooks.ts) — one per test run.
 */
export function testServerUrl(): Promise<string> {
  const given = process.env.HOOKRELAY_TEST_PG_URL;
  if (given) return Promise.resolve(given);
  shared ??= startCluster();
  return shared.then((c) => c.url);
}

/** Stops the cluster {@link testServerUrl} started, if it did. */
export async function stopSharedCluster(): Promise<void> {
  const c = await shared?.catch(() => undefined);
  shared = undefined;
  await c?.stop();
}

let counter = 0;

/** `url` with another database name. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A new, empty database on the test server (one per spec suite: creating one costs ~50 ms); its URL. */
export async function freshDatabase(label: string): Promise<string> {
  const server = await testServerUrl();
  const name = `hr_${label.replace(/\W+/g, '_').toLowerCase()}_${process.pid}_${++counter}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return withDatabase(server, name);
}

/** Empties every table of the store in `url` (between specs), restarting identities. */
export async function truncateAll(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'hookrelay_schema'");
    if (rows.length) await c.query(`TRUNCATE ${rows.map((r) => r.t).join(', ')} RESTART IDENTITY`);
  } finally {
    await c.end();
  }
}

/** What a crash leaves: instance `id` stopped renewing and its lease has run out (here: at once). */
export async function expireInstance(url: string, id: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("UPDATE instances SET lease_until = now() - interval '1 second' WHERE id = $1", [id]);
  } finally {
    await c.end();
  }
}

/**
 * Lets other users pass through `dir` (adds group and other execute), keeping every other
 * mode bit: the temp folder may be /tmp itself, whose sticky, world-writable mode others need.
 */
export function traversable(dir: string): void {
  const mode = statSync(dir).mode & 0o7777;
  if ((mode & 0o011) !== 0o011) chmodSync(dir, mode | 0o011);
}
