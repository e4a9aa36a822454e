/**
 * The store's bench scenarios (docs/performance.md "Reads beside accepts"): `/wake` p99 at a
 * fixed rate on a store of `--size` rows beside the same on an empty store, in one run.
 *
 *   store      the seeded store alone: what its size costs an accept
 *   reads      while /metrics is scraped every 5 s and runs are filtered by status every second
 *   retention  while the first retention pass purges the seeded rows (all aged): until they are
 *              gone, with the server's CPU per request and the file's size before and after
 *
 *   npx tsx spec/bench/store-scenarios.ts [--scenario store,reads,retention --size N --rate R --duration S]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { SqliteStore, DB_FILE } from '../../src/store/sqlite.js';
import { cpuMs } from './proc.js';
import { freePort, ROOT, sleep, tmpDir } from '../support/gateway.js';
import { silentLogger } from '../support/silent-logger.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : dflt);
const SCENARIOS = arg('scenario', 'store,reads,retention').split(',');
const SIZE = Number(arg('size', '100000'));
const RATE = Number(arg('rate', '1000'));
const DURATION = Number(arg('duration', '10'));
for (const s of SCENARIOS) if (!['store', 'reads', 'retention'].includes(s)) throw new Error(`--scenario: store, reads or retention, not ${s}`);
const TOKEN = 'bench-token-0123456789abcdef';
const ADMIN = 'bench-admin-token-0123456789abcdef';
const DAY_MS = 86_400_000;

/** A fresh data directory holding `size` runs (ended), requests and events, all `ageDays` old. */
async function seeded(size: number, ageDays: number): Promise<string> {
  const dir = tmpDir('hookrelay-bench-store-');
  await (await SqliteStore.open({ dataDir: dir, durability: 'os', log: silentLogger, retainDays: 0, idempotencyWindowSeconds: 60 })).close();
  if (size === 0) return dir;
  const db = new Database(path.join(dir, DB_FILE));
  const at = new Date(Date.now() - ageDays * DAY_MS).toISOString();
  const n = `WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < ${size})`;
  const statuses = "CASE n % 10 WHEN 0 THEN 'failed' WHEN 1 THEN 'timed_out' ELSE 'succeeded' END";
  db.exec(`BEGIN;
    ${n} INSERT INTO runs (run_id, session_key, status, message, wake_mode, deliver, provider, source, unsafe, created_at, ended_at)
      SELECT 'run-' || n, 'hook:' || n, ${statuses}, 'seeded message', 'now', 0, 'last', 'agent', 0, '${at}', '${at}' FROM i;
    ${n} INSERT INTO requests (at, method, path, route, status, ms, replayed)
      SELECT '${at}', 'POST', '/hooks/wake', CASE n % 3 WHEN 0 THEN 'agent' ELSE 'wake' END, CASE n % 20 WHEN 0 THEN 401 ELSE 200 END, 1, 0 FROM i;
    ${n} INSERT INTO events (id, kind, text, source, at, unsafe) SELECT 'e' || n, 'wake', 'seeded event text', 'wake', '${at}', 0 FROM i;
    COMMIT`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return dir;
}

async function serve(dir: string, retainDays: number): Promise<{ port: number; proc: ChildProcess }> {
  const port = await freePort();
  const config = {
    server: { host: '127.0.0.1', port, adminToken: ADMIN },
    dataDir: dir,
    store: { retainDays, durability: 'fsync' },
    hooks: { token: TOKEN, transformPoolSize: 1 },
    agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
    heartbeat: { everySeconds: 3600 },
  };
  fs.writeFileSync(path.join(dir, 'hookrelay.json'), JSON.stringify(config));
  const proc = spawn(process.execPath, [path.join(ROOT, 'src/bin.mjs'), 'serve', '--config', path.join(dir, 'hookrelay.json')], { stdio: ['ignore', 'ignore', 'ignore'] });
  for (let i = 0; i < 400; i++) {
    if (proc.exitCode !== null) throw new Error('the server exited at start');
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) return { port, proc };
    await sleep(50);
  }
  throw new Error('the server did not start within 20 s');
}

/** /wake at RATE for `seconds` (autocannon's fixed rate), with `beside` running meanwhile. */
async function wakeLoad(port: number, seconds: number, beside?: () => Promise<void>) {
  let stop = false;
  const side = (async () => {
    while (beside && !stop) await beside();
  })();
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/hooks/wake`, method: 'POST', connections: 16, overallRate: RATE, duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'bench', mode: 'next-heartbeat' }),
  });
  stop = true;
  await side;
  return { p99: result.latency.p99, max: result.latency.max, requests: result.requests.total, non2xx: result.non2xx + result.errors };
}

/** The console's and a scraper's reads: runs filtered by status every second, /metrics every 5 s. */
function readers(port: number): () => Promise<void> {
  let i = 0;
  const get = (p: string) => fetch(`http://127.0.0.1:${port}${p}`, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.text());
  return async () => {
    await get(`/hooks/runs?status=${i % 2 ? 'failed' : 'succeeded'}&limit=50`);
    if (i++ % 5 === 0) await get('/metrics');
    await sleep(1000);
  };
}

async function measure(scenario: string, size: number) {
  const retention = scenario === 'retention';
  const dir = await seeded(size, retention ? 10 : 0);
  const file = path.join(dir, DB_FILE);
  const before = fs.statSync(file).size;
  const { port, proc } = await serve(dir, retention ? 1 : 0);
  try {
    await wakeLoad(port, 2); // warm-up
    const cpu0 = cpuMs(proc.pid!);
    let figures;
    if (!retention) figures = await wakeLoad(port, DURATION, scenario === 'reads' ? readers(port) : undefined);
    else {
      // Until the first pass (within a minute of the start) has purged every seeded run.
      const left = () => {
        const db = new Database(file, { readonly: true });
        try {
          return (db.prepare("SELECT count(*) AS n FROM runs WHERE run_id LIKE 'run-%'").get() as { n: number }).n;
        } finally {
          db.close();
        }
      };
      const all = { p99: 0, max: 0, requests: 0, non2xx: 0 };
      for (let t = 0; t < 120 && (size === 0 ? t < 60 / DURATION : left() > 0); t++) {
        const f = await wakeLoad(port, DURATION);
        Object.assign(all, { p99: Math.max(all.p99, f.p99), max: Math.max(all.max, f.max), requests: all.requests + f.requests, non2xx: all.non2xx + f.non2xx });
      }
      figures = all;
    }
    const cpuUs = ((cpuMs(proc.pid!) - cpu0) * 1000) / Math.max(1, figures.requests);
    return { scenario, size, ...figures, cpuUs: Math.round(cpuUs), fileBytes: `${before} → ${fs.statSync(file).size}` };
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const scenario of SCENARIOS) {
  for (const size of [0, SIZE]) {
    const row = await measure(scenario, size);
    process.stdout.write(`${JSON.stringify(row)}\n`);
    rows.push(row);
  }
}
console.table(rows);
