/**
 * The store's bench scenarios (`npm run bench -- --scenario store,reads,retention`), each `/wake`
 * at a fixed rate (autocannon's `overallRate`, which corrects the latencies for coordinated
 * omission) against a gateway run by run.ts:
 *
 *   store      the bytes the store grows per accepted `/wake`, on a fresh store
 *   reads      `/wake` p99 at 1,000 req/s while the console filters runs and the request log every
 *              second and `/metrics` is scraped every 5 s, on a store of 1 M runs and 5 M
 *              request-log rows against the same on an empty store, in the same rounds
 *   retention  the first retention pass purging 2 M aged rows under `/wake` at 2,000 req/s: CPU
 *              per request while it runs against the same server's before it began, and the
 *              file's size before and after (the pass gives its free pages back)
 *
 * A seeded store is a copy of an empty store at the current schema, filled with better-sqlite3
 * in one transaction (no journal: a failed seeding is thrown away whole); `--seed-scale` below 1
 * seeds a fraction of the sizes for a quick run, and its rows are then not judged.
 */
import { type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { SqliteStore, DB_FILE } from '../../src/store/sqlite.js';
import { freePort, sleep } from '../support/gateway.js';
import { silentLogger } from '../support/silent-logger.js';
import { cpuMs } from './proc.js';
import { median, paired, round } from './stats.js';

/** What run.ts lends the scenarios. */
export interface StoreBench {
  /** The run's temporary directory. */
  dir: string;
  rounds: number;
  duration: number;
  warmUpSeconds: number;
  /** The share of the issue's sizes to seed (1: all of them). */
  seedScale: number;
  /** Starts the bin on `configFile`, pinned as run.ts pins every server, once `health` answers 200. */
  start(configFile: string, health: string): Promise<{ proc: ChildProcess; exited: Promise<void> }>;
  log(line: string): void;
}

export const STORE_RATE = 1000;
export const READS_RATE = 1000;
export const RETENTION_RATE = 2000;
/** Rows per table: what the targets name. */
export const READS_SEED: Seed = { runs: 1_000_000, requests: 5_000_000, events: 0 };
export const RETENTION_SEED: Seed = { runs: 500_000, requests: 1_000_000, events: 500_000 };
export interface Seed { runs: number; requests: number; events: number }

const TOKEN = 'bench-token-0123456789abcdef';
const ADMIN = 'bench-admin-token-0123456789abcdef';
const DAY_MS = 86_400_000;
/** Rows per INSERT … SELECT of the seeding, between progress lines. */
const CHUNK = 500_000;

const scaled = (seed: Seed, scale: number): Seed => ({
  runs: Math.round(seed.runs * scale), requests: Math.round(seed.requests * scale), events: Math.round(seed.events * scale),
});
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
export const seedText = (s: Seed) => Object.entries(s).filter(([, n]) => n > 0).map(([t, n]) => `${fmt(n)} ${t === 'requests' ? 'request-log rows' : t}`).join(', ');

/** `bytes per /wake`: pages in use (the file less its free pages, the WAL checkpointed) before and after, over the answers. */
export async function storeGrowth(b: StoreBench) {
  const dataDir = copyEmpty(b, 'store');
  const before = pagesInUse(dataDir);
  const server = await serve(b, dataDir, 0);
  let accepted = 0;
  let p99 = 0;
  try {
    accepted += (await wakeLoad(server.port, STORE_RATE, b.warmUpSeconds)).accepted;
    const f = await wakeLoad(server.port, STORE_RATE, b.rounds * b.duration);
    accepted += f.accepted;
    p99 = f.p99;
  } finally {
    await stop(server);
  }
  const grown = pagesInUse(dataDir) - before;
  const out = { rate: STORE_RATE, accepted, grownBytes: grown, bytesPerWake: round(grown / Math.max(1, accepted), 1), p99 };
  b.log(`  store      ${fmt(accepted)} /wake at ${STORE_RATE} req/s grew the store by ${fmt(grown)} bytes: ${out.bytesPerWake} per /wake (p99 ${p99} ms)`);
  return out;
}

/** `/wake` p99 with the console's and a scraper's reads beside it, seeded against empty, paired by round. */
export async function readsBeside(b: StoreBench) {
  const seed = scaled(READS_SEED, b.seedScale);
  const empty = await serve(b, copyEmpty(b, 'reads-empty'), 0);
  let seeded: Served | undefined;
  try {
    seeded = await serve(b, seedStore(b, 'reads-seeded', seed, 0), 0);
    const servers = [empty, seeded];
    for (const s of servers) await wakeLoad(s.port, READS_RATE, b.warmUpSeconds, await readers(s.port));
    const p99s: number[][] = [[], []];
    const cpus: number[][] = [[], []];
    for (let r = 0; r < b.rounds; r++) {
      for (const i of r % 2 ? [1, 0] : [0, 1]) {
        const s = servers[i]!;
        const cpu0 = cpuMs(s.proc.pid!);
        const f = await wakeLoad(s.port, READS_RATE, b.duration, await readers(s.port));
        p99s[i]!.push(f.p99);
        cpus[i]!.push(((cpuMs(s.proc.pid!) - cpu0) * 1000) / Math.max(1, f.requests));
      }
    }
    const out = {
      rate: READS_RATE, seed, scale: b.seedScale,
      emptyP99: median(p99s[0]!), seededP99: median(p99s[1]!), p99: paired(p99s[0]!, p99s[1]!),
      emptyCpuUs: round(median(cpus[0]!), 1), seededCpuUs: round(median(cpus[1]!), 1),
    };
    b.log(`  reads      /wake at ${READS_RATE} req/s with reads beside: p99 ${out.seededP99} ms on ${seedText(seed)} against ${out.emptyP99} ms on an empty store (${out.p99.toFixed(2)}×); CPU ${out.seededCpuUs} / ${out.emptyCpuUs} µs per request`);
    return out;
  } finally {
    await stop(empty);
    if (seeded) await stop(seeded);
  }
}

/** The first retention pass (at most a minute after the start) purging the seeded rows, all aged, under load. */
export async function retentionUnderLoad(b: StoreBench) {
  const seed = scaled(RETENTION_SEED, b.seedScale);
  const dataDir = seedStore(b, 'retention', seed, 10);
  const file = path.join(dataDir, DB_FILE);
  const fileBefore = fs.statSync(file).size;
  const server = await serve(b, dataDir, 1);
  try {
    await wakeLoad(server.port, RETENTION_RATE, b.warmUpSeconds);
    const db = new Database(file, { readonly: true, fileMustExist: true });
    // Cheap reads only (a lowest key, a page count): this process is also the load generator.
    const lowest = (table: string) => (db.prepare(`SELECT min(seq) AS s FROM ${table}`).get() as { s: number | null }).s;
    const started = () => (seed.requests > 0 && (lowest('requests') ?? Infinity) > 1) || (seed.runs > 0 && (lowest('runs') ?? Infinity) > 1);
    const done = () => (['requests', 'runs', 'events'] as const).every((t) => (lowest(t) ?? Infinity) > seed[t])
      && db.pragma('freelist_count', { simple: true }) === 0;
    let answered = 0;
    let finished!: () => void;
    const over = new Promise<void>((r) => (finished = r));
    const run = autocannon(wakeOptions(server.port, RETENTION_RATE, 600), () => finished());
    run.on('response', () => void answered++);
    const mark = () => ({ cpu: cpuMs(server.proc.pid!), answered, at: performance.now() });
    const cpuUs = (a: ReturnType<typeof mark>, z: ReturnType<typeof mark>) => round(((z.cpu - a.cpu) * 1000) / Math.max(1, z.answered - a.answered), 1);
    const from = mark();
    let begun: ReturnType<typeof mark> | undefined;
    let ended: ReturnType<typeof mark> | undefined;
    try {
      for (let waited = 0; !ended && waited < 600_000; waited += 250) {
        await sleep(250);
        if (!begun && started()) begun = mark();
        else if (begun && done()) ended = mark();
      }
    } finally {
      run.stop();
      await over;
      db.close();
    }
    const beforeCpuUs = begun ? cpuUs(from, begun) : 0;
    const duringCpuUs = begun && ended ? cpuUs(begun, ended) : 0;
    await stop(server); // its last checkpoint gives the file its final size
    const out = {
      rate: RETENTION_RATE, seed, scale: b.seedScale, beforeCpuUs, duringCpuUs, cpu: beforeCpuUs > 0 ? round(duringCpuUs / beforeCpuUs, 3) : 0,
      seconds: begun && ended ? round((ended.at - begun.at) / 1000, 1) : undefined, fileBefore, fileAfter: fs.statSync(file).size,
    };
    b.log(`  retention  ${seedText(seed)}, 10 days old, purged under /wake at ${RETENTION_RATE} req/s ${out.seconds === undefined ? 'NOT within 10 minutes' : `in ${out.seconds} s`}: CPU ${out.duringCpuUs} µs per request against ${out.beforeCpuUs} before (${out.cpu.toFixed(2)}×); file ${fmt(fileBefore)} → ${fmt(out.fileAfter)} bytes`);
    return out;
  } finally {
    await stop(server);
  }
}

interface Served { port: number; proc: ChildProcess; exited: Promise<void> }

async function serve(b: StoreBench, dataDir: string, retainDays: number): Promise<Served> {
  const port = await freePort();
  const config = {
    server: { host: '127.0.0.1', port, adminToken: ADMIN },
    dataDir,
    store: { retainDays, durability: 'fsync' },
    hooks: { token: TOKEN },
    agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
    heartbeat: { everySeconds: 3600 },
  };
  const file = `${dataDir}.json`;
  fs.writeFileSync(file, JSON.stringify(config));
  return { port, ...(await b.start(file, `http://127.0.0.1:${port}/healthz`)) };
}

async function stop(s: Served): Promise<void> {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return;
  s.proc.kill('SIGTERM');
  await s.exited;
}

const wakeOptions = (port: number, rate: number, seconds: number): autocannon.Options => ({
  url: `http://127.0.0.1:${port}/hooks/wake`, method: 'POST', connections: 16, overallRate: rate, duration: seconds,
  headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'bench', mode: 'next-heartbeat' }),
});

/** `/wake` at `rate` for `seconds`, with `beside` looping meanwhile. */
async function wakeLoad(port: number, rate: number, seconds: number, beside?: () => Promise<void>) {
  let done = false;
  const side = (async () => {
    while (beside && !done) await beside();
  })();
  try {
    const r = await autocannon(wakeOptions(port, rate, seconds));
    return { p99: r.latency.p99, requests: r.requests.total, accepted: r['2xx'] };
  } finally {
    done = true;
    await side;
  }
}

/** Signed in to the console: its runs filtered by status and its request log by status class and route every second, `/metrics` every 5 s. */
async function readers(port: number): Promise<() => Promise<void>> {
  const base = `http://127.0.0.1:${port}`;
  const login = await fetch(`${base}/console/login`, {
    method: 'POST', redirect: 'manual', body: new URLSearchParams({ token: ADMIN }).toString(),
    headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
  });
  const cookie = login.headers.get('set-cookie')?.split(';')[0];
  if (!cookie) throw new Error(`the console's sign-in answered ${login.status} without a session`);
  const get = async (p: string, headers: Record<string, string>) => {
    const r = await fetch(`${base}${p}`, { headers });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`GET ${p} answered ${r.status}`);
  };
  let i = 0;
  return async () => {
    const t0 = performance.now();
    await get(`/console/runs?status=${i % 2 ? 'failed' : 'succeeded'}`, { cookie });
    await get(`/console/requests?${i % 2 ? 'status=4xx&route=agent' : 'route=wake'}`, { cookie });
    if (i++ % 5 === 0) await get('/metrics', { authorization: `Bearer ${ADMIN}` });
    await sleep(Math.max(0, 1000 - (performance.now() - t0)));
  };
}

/** The file less its free pages, after a checkpoint of the WAL (the server stopped). */
function pagesInUse(dataDir: string): number {
  const db = new Database(path.join(dataDir, DB_FILE), { fileMustExist: true });
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pages = (db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number);
    return pages * (db.pragma('page_size', { simple: true }) as number);
  } finally {
    db.close();
  }
}

/** An empty store at the current schema: made once per run by the store's own migration, then copied. */
let template: string | undefined;
async function emptyStoreFile(b: StoreBench): Promise<string> {
  if (template) return template;
  const dir = path.join(b.dir, 'empty-store');
  await (await SqliteStore.open({ dataDir: dir, durability: 'os', log: silentLogger, retainDays: 0, idempotencyWindowSeconds: 60 })).close();
  const db = new Database(path.join(dir, DB_FILE));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return (template = path.join(dir, DB_FILE));
}

/** Made by run.ts before any scenario runs (the migration is async, the seeding not). */
export const prepareStores = (b: StoreBench) => emptyStoreFile(b).then(() => undefined);

function copyEmpty(b: StoreBench, name: string): string {
  if (!template) throw new Error('prepareStores() first');
  const dataDir = path.join(b.dir, name);
  fs.mkdirSync(dataDir, { recursive: true });
  fs.copyFileSync(template, path.join(dataDir, DB_FILE));
  return dataDir;
}

/** A copy of the empty store holding `seed`'s rows, `ageDays` old: runs ended, request-log rows of several routes and statuses, wake events. */
function seedStore(b: StoreBench, name: string, seed: Seed, ageDays: number): string {
  const dataDir = copyEmpty(b, name);
  const db = new Database(path.join(dataDir, DB_FILE));
  const at = new Date(Date.now() - ageDays * DAY_MS).toISOString();
  const t0 = performance.now();
  const statuses = "CASE n % 10 WHEN 0 THEN 'failed' WHEN 1 THEN 'timed_out' ELSE 'succeeded' END";
  const sql = {
    runs: `INSERT INTO runs (run_id, session_key, status, message, wake_mode, deliver, provider, source, unsafe, created_at, ended_at)
      SELECT 'run-' || n, 'hook:' || (n % 1000), ${statuses}, 'seeded message', 'now', 0, 'last', 'agent', 0, '${at}', '${at}' FROM i`,
    requests: `INSERT INTO requests (at, method, path, route, status, ms, replayed)
      SELECT '${at}', 'POST', '/hooks/' || r, r, CASE WHEN n % 20 = 0 THEN 401 WHEN n % 3 = 0 THEN 202 ELSE 200 END, 1, 0
      FROM (SELECT n, CASE n % 3 WHEN 0 THEN 'agent' ELSE 'wake' END AS r FROM i)`,
    events: `INSERT INTO events (id, kind, text, source, at, unsafe) SELECT 'e' || n, 'wake', 'seeded event text', 'wake', ${Date.parse(at)}, 0 FROM i`,
  };
  try {
    // No journal and no syncs while seeding: the copy is thrown away if this fails.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -65536');
    db.exec('BEGIN');
    for (const table of ['runs', 'requests', 'events'] as const) {
      for (let from = 1; from <= seed[table]; from += CHUNK) {
        const to = Math.min(seed[table], from + CHUNK - 1);
        db.exec(`WITH RECURSIVE i(n) AS (SELECT ${from} UNION ALL SELECT n + 1 FROM i WHERE n < ${to}) ${sql[table]}`);
        b.log(`  seeding ${name}: ${table} ${fmt(to)} / ${fmt(seed[table])} (${round((performance.now() - t0) / 1000, 1)} s)`);
      }
    }
    db.exec('COMMIT');
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
  return dataDir;
}
