/**
 * `npm run bench`: hookrelay side by side with three baselines — bare node:http (baseline.mjs),
 * the durable one (durable-baseline.mjs: the same plus one row per event in grouped commits,
 * WAL, synchronous=FULL) and the observed one (observed-baseline.mjs: the durable one plus a
 * request-log row in the same commit, a pino access line and prom-client metrics) — measured alternately in the same rounds, on the same core,
 * with the same load generator (autocannon, in this process, on the other core where taskset
 * exists). hookrelay runs its default config (access log at info, drained by this process,
 * metrics and console on). Prints req/s (median of the rounds), p50/p99 latency, CPU per
 * request and peak RSS (of the server with its child processes, transform workers, each page once: rssMiB), and each
 * scenario's ratio of req/s and multiple of CPU per request against the durable and observed
 * baselines and bare (each the median over the rounds of that round's pair); then the target table of issue
 * 34 (targets.ts), a soak, start-up time with 100 mappings, and the `mappings` curve (the last
 * of `--mappings` mappings on one path, told apart by source or a header, against one mapping:
 * mappingsCurve); writes the figures as JSON and compares them with the previous run's.
 *
 * Each scenario gets a fresh server on a fresh data directory: the runs and heartbeats an
 * earlier scenario queued (the fake model takes a second per turn, so a 20 s /agent load
 * leaves hours of work) would otherwise still be worked off on the same core, and a
 * scenario's figure would depend on what ran before it.
 *
 * `--against REV` also measures hookrelay as of git revision REV (checked out into a
 * temporary worktree, sharing this node_modules) in the same rounds, alternating with this
 * tree, and prints this tree's ratio against it: how a change moved each path, on the same
 * machine in the same minutes. It also prints the change of CPU per request from each round's
 * pair (median, lowest and highest round): the steadier figure on a machine whose speed drifts,
 * so use more, shorter rounds (`--rounds 8 --duration 3`) to compare builds. REV's server is
 * given only the mapping of the scenario it is measured on; a scenario REV cannot serve (a
 * mapping it refuses) is measured without it.
 *
 * `--store postgres` measures hookrelay on PostgreSQL instead of SQLite, `--store both` on both in
 * the same rounds (the PostgreSQL row also gets its ratio to SQLite): each scenario's servers on
 * a fresh database of the test server (HOOKRELAY_TEST_PG_URL, else a throwaway cluster started
 * and stopped by spec/support/postgres.ts). `--instances 2` starts two servers on that one
 * database, pinned to the same core as one, and splits the load generator's connections
 * between them (one autocannon per server, in parallel, summed). The soak and the start-up
 * time stay SQLite's; only a default full run (SQLite, no --only) writes last-run.json.
 *
 * `--rate R` measures at a fixed R requests per second (split over the instances) instead of as
 * many as the server takes: what a sender feels at a steady rate is the p99, and autocannon
 * corrects it for coordinated omission at a fixed rate
 * (https://github.com/mcollina/autocannon#usage, `-R/--overallRate`). The req/s ratios then
 * only say whether every server kept up; compare the p99 and the CPU per request.
 *
 *   npm run bench [-- --rounds 3 --duration 5 --connections 32 --soak 200000 --only wake,agent --against REV
 *                     --store sqlite|postgres|both --instances 2 --mappings 5000]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startFakeModel } from '../support/fake-model.js';
import { BIN, ROOT, freePort, sleep, tmpDir } from '../support/gateway.js';
import { freshDatabase, stopSharedCluster } from '../support/postgres.js';
import { SCENARIOS, benchConfig, writeBenchTransforms, type Scenario } from './scenarios.js';
import { DURABLE_TARGETS, REFUSAL_TARGET, targetRows, type Judged } from './targets.js';
import { cpuMs, rssMiB, stealTicks } from './proc.js';
import { median, paired, pairedCpu, round, type PairedCpu } from './stats.js';

const args = process.argv.slice(2);
const USAGE = `npm run bench [-- --rounds N --duration S --connections N --soak N --only a,b --against REV --store sqlite|postgres|both --instances N --rate R --mappings N]
scenarios for --only: ${SCENARIOS.map((s) => s.name).join(', ')}, soak, startup, mappings (see the head of spec/bench/run.ts and docs/performance.md)`;
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const OPTIONS = ['--rounds', '--duration', '--connections', '--soak', '--only', '--against', '--store', '--instances', '--rate', '--mappings'];
for (let i = 0; i < args.length; i += 2) {
  if (!OPTIONS.includes(args[i]!) || args[i + 1] === undefined) {
    process.stderr.write(`bench: ${OPTIONS.includes(args[i]!) ? `${args[i]} takes a value` : `unknown option ${args[i]}`}\n${USAGE}\n`);
    process.exit(2);
  }
}
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
/** True when `name` (a scenario, `soak`, `startup` or `mappings`) is to run: every one without --only, else those it lists. */
const runs = (name: string) => !only || only.split(',').includes(name);
const against = args.includes('--against') ? args[args.indexOf('--against') + 1] : undefined;
const ROUNDS = opt('rounds', 3);
const DURATION = opt('duration', 5);
const CONNECTIONS = opt('connections', 32);
const SOAK = opt('soak', 200_000);
const STORE = args.includes('--store') ? args[args.indexOf('--store') + 1] : 'sqlite';
const INSTANCES = opt('instances', 1);
const RATE = opt('rate', 0);
/** The `mappings` scenario's count of mappings on one path. */
const MAPPINGS = opt('mappings', 5000);
if (!(Number.isInteger(MAPPINGS) && MAPPINGS >= 2)) throw new Error(`--mappings: a whole number of at least 2, not ${MAPPINGS}`);
if (!(Number.isFinite(RATE) && RATE >= 0)) throw new Error(`--rate: requests per second (0: as many as the server takes), not ${RATE}`);
if (!['sqlite', 'postgres', 'both'].includes(STORE!)) throw new Error(`--store: sqlite, postgres or both, not ${STORE}`);
if (!(Number.isInteger(INSTANCES) && INSTANCES >= 1 && INSTANCES <= CONNECTIONS)) throw new Error(`--instances: a whole number from 1 to --connections, not ${INSTANCES}`);
if (INSTANCES > 1 && STORE === 'sqlite') throw new Error('--instances needs --store postgres or both: a SQLite store has one instance');
const PG_LABEL = `postgres${INSTANCES > 1 ? ` ×${INSTANCES}` : ''}`;
const TOKEN = 'bench-token-0123456789abcdef';
const RESULTS = path.join(ROOT, 'spec/bench/last-run.json');

const hasTaskset = spawnSync('taskset', ['-V']).status === 0 && os.cpus().length >= 2;
const SERVER_CPU = '0';
if (hasTaskset) spawnSync('taskset', ['-cp', '1', String(process.pid)]); // the generator's core

/**
 * `cpuUs`: the server's CPU time (user + system, all its threads) per request — unlike req/s,
 * it does not drop when the hypervisor takes the core away. `stealPct`: the share of the
 * machine's time the hypervisor took during the measurement (/proc/stat); above ~5 % req/s
 * figures are depressed and noisy, so the table shows it.
 */
interface Figures { rps: number; p50: number; p99: number; rssMiB: number; cpuUs: number; stealPct: number; errors: number; statuses: Record<string, number> }

async function main() {
  build(ROOT); // the bin runs dist/: this tree's, current
  const dir = tmpDir('hookrelay-bench-');
  // A model that answers after a second, like a real one: runs and heartbeats keep going in
  // the background during the measurements, as they would in production, without dominating.
  const model = await startFakeModel([{ match: '', reply: 'HEARTBEAT_OK', delayMs: 1000 }]);
  writeBenchTransforms(dir);
  const basePort = await freePort();
  const other = against ? checkout(against, dir) : undefined;
  const maxBody = benchConfig({ dir, port: 0, token: TOKEN, modelUrl: model.baseUrl }).hooks.maxBodyBytes;
  /**
   * A fresh server of `bin` on its own data directory and port; on PostgreSQL, `instances` of
   * them on one fresh database (started one after the other, as a rolling start would).
   */
  const serve = async (bin: string, name: string, onlyFor?: Scenario, store: 'sqlite' | 'postgres' = 'sqlite'): Promise<Server> => {
    const url = store === 'postgres' ? await freshDatabase(`bench_${name}`) : undefined;
    const instances: Instance[] = [];
    try {
      for (let n = 0; n < (url ? INSTANCES : 1); n++) {
        const port = await freePort();
        const sub = path.join(dir, n ? `${name}-${n}` : name);
        const config = benchConfig({ dir, port, token: TOKEN, modelUrl: model.baseUrl, dataDir: path.join(sub, 'data') });
        if (url) (config as Record<string, unknown>).store = { kind: 'postgres', url };
        // REV gets only the mapping its scenario hits: a mapping using something newer than REV
        // (a `verify`, say) would make it refuse the whole file.
        if (onlyFor) config.hooks.mappings = config.hooks.mappings.filter((m) => `/${(m.match as { path: string }).path}` === onlyFor.path);
        fs.mkdirSync(sub, { recursive: true });
        fs.writeFileSync(path.join(sub, 'hookrelay.json'), JSON.stringify(config, null, 2));
        instances.push({ port, ...(await startProcess([bin, 'serve', '--config', path.join(sub, 'hookrelay.json')], `http://127.0.0.1:${port}/healthz`)) });
      }
    } catch (err) {
      await stop({ instances });
      throw err;
    }
    return { instances };
  };

  log(`hookrelay bench — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'})`);
  log(`${hasTaskset ? `server on cpu ${SERVER_CPU}, load generator on cpu 1` : 'no taskset: server and generator share the cpus'}; ${CONNECTIONS} connections${RATE ? ` at ${RATE} req/s` : ''}, ${ROUNDS} rounds × ${DURATION} s per scenario and server${other ? `; against ${against} (${other.rev})` : ''}`);

  const baseline = await startProcess([path.join(ROOT, 'spec/bench/baseline.mjs'), String(basePort), TOKEN, String(maxBody)], `http://127.0.0.1:${basePort}/healthz`, { anyStatus: true });
  const durablePort = await freePort();
  const durableProc = await startProcess([path.join(ROOT, 'spec/bench/durable-baseline.mjs'), String(durablePort), TOKEN, String(maxBody), path.join(dir, 'durable-baseline')], `http://127.0.0.1:${durablePort}/healthz`, { anyStatus: true });
  const observedPort = await freePort();
  const observedProc = await startProcess([path.join(ROOT, 'spec/bench/observed-baseline.mjs'), String(observedPort), TOKEN, String(maxBody), path.join(dir, 'observed-baseline')], `http://127.0.0.1:${observedPort}/healthz`, { anyStatus: true });
  const judged: Record<string, Judged> = {};

  const results: Record<string, unknown> = {};
  const table: string[][] = [];
  try {
    for (const sc of SCENARIOS.filter((s) => runs(s.name))) {
      // With --against both builds get the same config: only the scenario's mapping.
      const hookrelay = await serve(BIN, sc.name, other ? sc : undefined, STORE === 'postgres' ? 'postgres' : 'sqlite');
      const onPg = STORE === 'both' ? await serve(BIN, `${sc.name}-pg`, undefined, 'postgres') : undefined;
      const older = other ? await serve(other.bin, `${sc.name}-against`, sc).catch((e: Error) => {
        log(`  ${sc.name}: ${against} cannot serve this scenario (${e.message.split('\n').find((l) => l.trim()) ?? ''}); measured without it`);
        return undefined;
      }) : undefined;
      const servers = [hookrelay, ...(onPg ? [onPg] : []), ...(older ? [older] : [])];
      // Every server but the one measured is frozen (its background work too), so that each
      // gets the whole core: the baseline, this tree and REV alike.
      const alone = async <T>(running: unknown, fn: () => Promise<T>): Promise<T> => {
        for (const s of servers) if (s !== running) for (const i of s.instances) i.proc.kill('SIGSTOP');
        try {
          return await fn();
        } finally {
          for (const s of servers) if (s !== running) for (const i of s.instances) i.proc.kill('SIGCONT');
        }
      };
      const bare: Server = { instances: [{ port: basePort, ...baseline }] };
      const durable: Server = { instances: [{ port: durablePort, ...durableProc }] };
      const observed: Server = { instances: [{ port: observedPort, ...observedProc }] };
      // The fresh server before any load: the idle RSS target, on the gateway process alone
      // (its transform worker processes are shown beside it).
      const idleRss = Math.max(...hookrelay.instances.map((i) => rssMiB(i.proc.pid!, false)));
      const idleRssAll = Math.max(...hookrelay.instances.map((i) => rssMiB(i.proc.pid!)));
      const opts = (s: Server, kind: 'base' | 'hr') => s.instances.map((i, n) => request(sc, i.port, kind, share(n, s.instances.length)));
      try {
        // Warm-up: JIT, caches, connection pools (WARM_UP_SECONDS says why so long).
        for (const s of servers) await alone(s, () => Promise.all(opts(s, 'hr').map((o) => load(o, WARM_UP_SECONDS))));
        await alone(bare, () => load(opts(bare, 'base')[0]!, WARM_UP_SECONDS));
        await alone(durable, () => load(opts(durable, 'base')[0]!, WARM_UP_SECONDS));
        await alone(observed, () => load(opts(observed, 'base')[0]!, WARM_UP_SECONDS));
        const base: Figures[] = [];
        const dur: Figures[] = [];
        const obs: Figures[] = [];
        const hr: Figures[] = [];
        const pgs: Figures[] = [];
        const old: Figures[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          base.push(await alone(bare, () => measure(opts(bare, 'base'), bare)));
          obs.push(await alone(observed, () => measure(opts(observed, 'base'), observed)));
          // Every other round the order turns: what runs right after the baseline (or right after
          // another server) is measured differently enough to show a build 5–12 % slower than
          // itself (seen with --against HEAD), so no server keeps that place.
          const measureOlder = async () => { if (older) old.push(await alone(older, () => measure(opts(older, 'hr'), older))); };
          const measureDurable = async () => { dur.push(await alone(durable, () => measure(opts(durable, 'base'), durable))); };
          if (r % 2 === 1) await measureOlder();
          else await measureDurable();
          hr.push(await alone(hookrelay, () => measure(opts(hookrelay, 'hr'), hookrelay)));
          if (onPg) pgs.push(await alone(onPg, () => measure(opts(onPg, 'hr'), onPg)));
          if (r % 2 === 0) await measureOlder();
          else await measureDurable();
        }
        const b = summarise(base);
        const h = summarise(hr);
        const o = older ? summarise(old) : undefined;
        const pgF = onPg ? summarise(pgs) : undefined;
        const pgVs = pgF ? { instances: INSTANCES, hookrelay: pgF, ratio: round(pgF.rps / b.rps, 3), toSqlite: round(pgF.rps / h.rps, 3) } : undefined;
        const d = summarise(dur);
        const ob = summarise(obs);
        const vsObserved = { rps: paired(of(obs, 'rps'), of(hr, 'rps')), cpu: paired(of(obs, 'cpuUs'), of(hr, 'cpuUs')) };
        const ratio = h.rps / b.rps;
        // Against each baseline, round by round: each round's pair ran minutes apart at most.
        const vsDurable = { rps: paired(of(dur, 'rps'), of(hr, 'rps')), cpu: paired(of(dur, 'cpuUs'), of(hr, 'cpuUs')) };
        const vsBare = { rps: paired(of(base, 'rps'), of(hr, 'rps')), cpu: paired(of(base, 'cpuUs'), of(hr, 'cpuUs')) };
        // Accept paths against the durable baseline, refusals against bare node:http (targets.ts).
        const target = DURABLE_TARGETS[sc.name] ?? (sc.name === 'unauthorized' ? REFUSAL_TARGET : undefined);
        const measured = sc.name in DURABLE_TARGETS ? vsDurable.rps : vsBare.rps;
        const verdict = target === undefined ? '' : `${measured >= target ? '≥' : '<'} ${target} of ${sc.name in DURABLE_TARGETS ? 'durable' : 'bare'} ${measured >= target ? '✓' : '✗'}`;
        // The CPU per request of the two builds, round by round: each round's pair ran back to
        // back, so the machine's drift (the same build measured 80 and 95 µs an hour apart here)
        // cancels out of their difference far better than out of medians of req/s.
        const vs = o ? { ratio: round(o.rps / b.rps, 3), change: round(h.rps / o.rps - 1, 3), cpu: pairedCpu(of(old, 'cpuUs'), of(hr, 'cpuUs')) } : undefined;
        results[sc.name] = { store: STORE === 'postgres' ? PG_LABEL : 'sqlite', baseline: b, durable: d, observed: ob, hookrelay: h, ratio: round(ratio, 3), vsDurable, vsObserved, vsBare, idleRssMiB: round(idleRss, 1), idleRssWithWorkersMiB: round(idleRssAll, 1), target, ...(pgVs ? { postgres: pgVs } : {}), ...(o ? { against: { rev: other!.rev, hookrelay: o, ...vs } } : {}) };
        const steal = Math.max(b.stealPct, d.stealPct, ob.stealPct, h.stealPct, o?.stealPct ?? 0, pgF?.stealPct ?? 0);
        if (STORE !== 'postgres') judged[sc.name] = { accepted: sc.accepted, durable: vsDurable, bare: vsBare, p99: h.p99, stealPct: steal, rssMiB: h.rssMiB, idleRssMiB: idleRss };
        const pgText = pgVs ? `${fmt(pgVs.hookrelay.rps)} (${pgVs.ratio.toFixed(2)}; ${pgVs.toSqlite.toFixed(2)} of SQLite), p50/p99 ${pgF!.p50} / ${pgF!.p99}, CPU ${pgF!.cpuUs}, ${statuses(pgF!.statuses)}` : '';
        const vsText = vs ? `${vs.ratio.toFixed(2)} → ${ratio.toFixed(2)} (${pct(vs.change)}); CPU ${cpuText(vs.cpu)}` : '';
        table.push([sc.name, fmt(b.rps), fmt(d.rps), fmt(ob.rps), fmt(h.rps), vsDurable.rps.toFixed(2), `${vsDurable.cpu.toFixed(2)}×`, vsObserved.rps.toFixed(2), `${vsObserved.cpu.toFixed(2)}×`, vsBare.rps.toFixed(2), verdict, ...(onPg ? [pgText] : []), ...(other ? [vsText] : []), `${h.p50} / ${h.p99}`, `${b.cpuUs} / ${d.cpuUs} / ${ob.cpuUs} / ${h.cpuUs}`, `${idleRss.toFixed(0)} (${idleRssAll.toFixed(0)}) / ${h.rssMiB.toFixed(0)}`, `${steal}`, statuses(h.statuses)]);
        log(`  ${sc.name.padEnd(10)} bare ${fmt(b.rps)} req/s, durable ${fmt(d.rps)} req/s, hookrelay ${fmt(h.rps)} req/s: ${vsDurable.rps.toFixed(2)} of durable ${verdict} (CPU ${vsDurable.cpu.toFixed(2)}×), ${vsObserved.rps.toFixed(2)} of observed (${fmt(ob.rps)} req/s, CPU ${vsObserved.cpu.toFixed(2)}×), ${vsBare.rps.toFixed(2)} of bare${pgVs ? `, ${PG_LABEL} ${fmt(pgVs.hookrelay.rps)} req/s, ratio ${pgVs.ratio.toFixed(2)} (${pgVs.toSqlite.toFixed(2)} of SQLite), p50/p99 ${pgF!.p50}/${pgF!.p99} ms, CPU ${pgF!.cpuUs} µs, statuses ${statuses(pgF!.statuses)}` : ''}${vs ? `, ${against} ${vs.ratio.toFixed(2)} (${pct(vs.change)}, CPU ${o!.cpuUs} µs, p50/p99 ${o!.p50}/${o!.p99} ms; paired CPU ${cpuText(vs.cpu)})` : ''}, p50/p99 ${h.p50}/${h.p99} ms, CPU ${b.cpuUs} / ${d.cpuUs} / ${ob.cpuUs} / ${h.cpuUs} µs per request, RSS ${h.rssMiB.toFixed(0)} MiB, steal ${steal} %`);
      } finally {
        await Promise.all(servers.map(stop));
      }
    }

    if (runs('soak') && STORE !== 'postgres') {
      const hookrelay = await serve(BIN, 'soak');
      try {
        results.soak = await soak(hookrelay.instances[0]!.port, hookrelay.instances[0]!.proc);
      } finally {
        await stop(hookrelay);
      }
    }
  } finally {
    await stop({ instances: [{ port: basePort, ...baseline }] });
    await stop({ instances: [{ port: durablePort, ...durableProc }] });
    await stop({ instances: [{ port: observedPort, ...observedProc }] });
    await model.close();
    other?.remove();
    await stopSharedCluster();
  }
  if (runs('startup') && STORE !== 'postgres') results.startup = await startup(dir, model.baseUrl);
  if (runs('mappings') && STORE !== 'postgres') results.mappings = await mappingsCurve(dir, model.baseUrl);

  printTable(table, other ? `vs ${against}` : undefined, onPgColumn());
  if (STORE !== 'postgres') printTargets(targetRows(judged, { soakPeakMiB: (results.soak as { rssPeakMiB?: number } | undefined)?.rssPeakMiB, readyMs: (results.startup as { medianMs?: number } | undefined)?.medianMs }));
  const previous = fs.existsSync(RESULTS) ? JSON.parse(fs.readFileSync(RESULTS, 'utf8')) : undefined;
  const out = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, taskset: hasTaskset, connections: CONNECTIONS, rounds: ROUNDS, durationSeconds: DURATION, store: STORE, instances: INSTANCES, results };
  // last-run.json is the default run's record: a partial or PostgreSQL run would not compare.
  const save = !only && STORE === 'sqlite' && !RATE;
  if (previous && save) compare(previous, out);
  if (save) fs.writeFileSync(RESULTS, `${JSON.stringify(out, null, 2)}\n`);
  log(save ? `figures written to ${path.relative(ROOT, RESULTS)}` : `(${only ? '--only' : RATE ? '--rate' : `--store ${STORE}`}: figures not saved)`);
}

/** hookrelay as of `rev`, in a temporary git worktree that uses this tree's node_modules. */
function checkout(rev: string, dir: string): { bin: string; rev: string; remove(): void } {
  const at = path.join(dir, 'against');
  const git = (...a: string[]) => {
    const r = spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout.trim();
  };
  const commit = git('rev-parse', '--short', `${rev}^{commit}`);
  git('worktree', 'add', '--detach', at, commit);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(at, 'node_modules'));
  build(at);
  return { bin: path.join(at, 'src/bin.mjs'), rev: commit, remove: () => void spawnSync('git', ['worktree', 'remove', '--force', at], { cwd: ROOT }) };
}

/** Builds dist/ in the tree at `root` (scripts/build.mjs), if it has a build: older revisions ran their sources through tsx. */
function build(root: string): void {
  if (!fs.existsSync(path.join(root, 'scripts/build.mjs'))) return;
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the build of ${root} failed:\n${r.stderr}`);
}

interface Instance { port: number; proc: ChildProcess; exited: Promise<void> }
/** What one figure is measured on: one process, or several instances on one database. */
interface Server { instances: Instance[] }

async function stop(s: Server) {
  await Promise.all(s.instances.map(async (i) => {
    i.proc.kill('SIGCONT');
    i.proc.kill('SIGTERM');
    await i.exited;
  }));
}

/** Instance n's share of the connections when `of` instances split them. */
const share = (n: number, of: number) => Math.floor(CONNECTIONS / of) + (n < CONNECTIONS % of ? 1 : 0);

/** The table's extra column when PostgreSQL is measured beside SQLite. */
const onPgColumn = () => (STORE === 'both' ? `${PG_LABEL} req/s (ratio; of SQLite), p50/p99, CPU µs` : undefined);

function request(sc: Scenario, port: number, kind: 'base' | 'hr', connections = CONNECTIONS): autocannon.Options {
  const body = sc.body();
  return {
    url: `http://127.0.0.1:${port}${kind === 'hr' ? `/hooks${sc.path}` : '/'}`,
    method: 'POST',
    headers: { authorization: `Bearer ${sc.badToken ? 'wrong-token' : TOKEN}`, 'content-type': 'application/json', ...sc.headers?.(body) },
    body,
    connections,
  };
}

/**
 * Seconds of load each server gets before it is measured. V8 keeps optimizing a process as
 * large as hookrelay for several seconds under load, on background threads that share the
 * pinned core: in 2 s windows of a fresh gateway under the transform scenario (2–4 k req/s, a
 * busy machine) those threads took 200–300 µs a request for the first ~6 s and ~5 µs from
 * about 8 s on, where the main thread's own share went from ~330 to ~150 µs. A 1 s warm-up
 * charged that to the first rounds; a gateway runs for days, so the figures are its steady state.
 */
const WARM_UP_SECONDS = 5;

function load(o: autocannon.Options, seconds: number): Promise<autocannon.Result> {
  return autocannon({ ...o, duration: seconds });
}

/**
 * One load per instance (`loads[n]` against instance n), in parallel: req/s and CPU summed over
 * the instances, latency the worst instance's, RSS the largest instance's.
 */
async function measure(loads: autocannon.Options[], s: Server): Promise<Figures> {
  const pids = s.instances.map((i) => i.proc.pid!);
  const cpuAll = () => pids.reduce((a, pid) => a + cpuMs(pid), 0);
  let peak = 0;
  const sample = () => { for (const pid of pids) peak = Math.max(peak, rssMiB(pid)); };
  const sampler = setInterval(sample, 200);
  const cpu0 = cpuAll();
  const steal0 = stealTicks();
  const rs = await Promise.all(loads.map((o) => load(RATE ? { ...o, overallRate: RATE / loads.length } : o, DURATION)));
  const cpu = cpuAll() - cpu0;
  const steal = stealTicks();
  clearInterval(sampler);
  sample();
  const statusesSeen: Record<string, number> = {};
  for (const r of rs) {
    for (const [code, v] of Object.entries((r as any).statusCodeStats ?? {})) statusesSeen[code] = (statusesSeen[code] ?? 0) + (v as { count: number }).count;
  }
  const total = rs.reduce((a, r) => a + r.requests.total, 0);
  const cpuUs = total > 0 ? round((cpu * 1000) / total, 1) : 0;
  const stealPct = round((100 * (steal.steal - steal0.steal)) / Math.max(1, steal.total - steal0.total), 1);
  return {
    rps: rs.reduce((a, r) => a + r.requests.average, 0),
    p50: Math.max(...rs.map((r) => r.latency.p50)),
    p99: Math.max(...rs.map((r) => r.latency.p99)),
    rssMiB: peak, cpuUs, stealPct,
    errors: rs.reduce((a, r) => a + r.errors, 0),
    statuses: statusesSeen,
  };
}

function summarise(rounds: Figures[]): Figures {
  const statusesSeen: Record<string, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.statuses)) statusesSeen[k] = (statusesSeen[k] ?? 0) + v;
  return {
    rps: Math.round(median(rounds.map((r) => r.rps))),
    p50: round(median(rounds.map((r) => r.p50)), 1),
    p99: round(median(rounds.map((r) => r.p99)), 1),
    rssMiB: Math.max(...rounds.map((r) => r.rssMiB)),
    cpuUs: round(median(rounds.map((r) => r.cpuUs)), 1),
    stealPct: Math.max(...rounds.map((r) => r.stealPct)),
    errors: rounds.reduce((a, r) => a + r.errors, 0),
    statuses: statusesSeen,
  };
}

/**
 * ≥ 200 k durable /wake requests; RSS sampled every 500 ms. Growth compares the soak's last
 * quarter with its second (the median of each): RSS rises for the first seconds (V8 sizing its
 * heap, code compiled) and swings by ~10 MiB with each full collection after that, so two
 * single readings — after a short warm-up, and at the end — showed a growth that was only
 * where in a collection's cycle each fell.
 */
async function soak(port: number, proc: ChildProcess) {
  const sc = SCENARIOS.find((s) => s.name === 'wake')!;
  await load(request(sc, port, 'hr'), 2);
  const samples = [rssMiB(proc.pid!)];
  const sampler = setInterval(() => samples.push(rssMiB(proc.pid!)), 500);
  const t0 = performance.now();
  const r = await autocannon({ ...request(sc, port, 'hr'), amount: SOAK });
  clearInterval(sampler);
  const seconds = (performance.now() - t0) / 1000;
  const quarter = (i: number) => median(samples.slice(Math.floor((samples.length * i) / 4), Math.floor((samples.length * (i + 1)) / 4)));
  const [start, end, peak] = [quarter(1), quarter(3), Math.max(...samples)];
  const growth = (end - start) / start;
  const out = { requests: r.requests.total, seconds: round(seconds, 1), rps: Math.round(r.requests.total / seconds), p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, rssStartMiB: round(start, 1), rssEndMiB: round(end, 1), rssPeakMiB: round(peak, 1), growth: round(growth, 3) };
  log(`  soak       ${out.requests} requests in ${out.seconds} s (${fmt(out.rps)} req/s, p99 ${out.p99} ms, non-2xx ${out.non2xx}), RSS ${out.rssStartMiB} → ${out.rssEndMiB} MiB (medians of the second and the last quarter; peak ${out.rssPeakMiB}, ${(growth * 100).toFixed(1)} %) ${Math.abs(growth) <= 0.1 && peak < 150 ? '✓' : '✗'}`);
  return out;
}

/** Spawn → first 200 from /healthz, with 100 mappings (templates, JSONata, a TS transform). */
async function startup(dir: string, modelUrl: string) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const port = await freePort();
    const cfg = benchConfig({ dir, port, token: TOKEN, modelUrl, mappings: 100, dataDir: path.join(dir, `startup-${i}`) });
    const file = path.join(dir, `startup-${i}.json`);
    fs.writeFileSync(file, JSON.stringify(cfg));
    const t0 = performance.now();
    const p = await startProcess([BIN, 'serve', '--config', file], `http://127.0.0.1:${port}/healthz`);
    times.push(performance.now() - t0);
    p.proc.kill('SIGTERM');
    await p.exited;
  }
  times.sort((a, b) => a - b);
  const out = { mappings: 100, medianMs: Math.round(times[2]), minMs: Math.round(times[0]), maxMs: Math.round(times[4]) };
  log(`  startup    ready in ${out.medianMs} ms (median of 5, ${out.minMs}–${out.maxMs}) with 100 mappings ${out.medianMs < 1000 ? '✓' : '✗'}`);
  return out;
}

/** The node flags of the bin's shebang (`#!/usr/bin/env -S node FLAGS`): the bench runs it as installed. */
/**
 * CPU per request on the last of MAPPINGS mappings of one path, told apart by `source` or by a
 * header, as a multiple of the same request to the path's only mapping (paired by round, each
 * server alone on the core while it is measured; target ≤ 1.15×).
 */
async function mappingsCurve(dir: string, modelUrl: string) {
  const out: Record<string, { mappings: number; oneCpuUs: number; manyCpuUs: number; cpu: number }> = {};
  for (const by of ['source', 'header'] as const) {
    const servers: { server: Server; last: number }[] = [];
    try {
      for (const n of [1, MAPPINGS]) {
        const port = await freePort();
        const sub = path.join(dir, `mappings-${by}-${n}`);
        const config = benchConfig({ dir, port, token: TOKEN, modelUrl, dataDir: path.join(sub, 'data') });
        config.hooks.mappings = Array.from({ length: n }, (_, i) => ({
          id: `many-${i}`, match: by === 'source' ? { path: 'many', source: `s${i}` } : { path: 'many', headers: { 'x-kind': `k${i}` } },
          action: 'wake', wakeMode: 'next-heartbeat', textTemplate: `Event {{id}} #${i}`,
        }));
        fs.mkdirSync(sub, { recursive: true });
        fs.writeFileSync(path.join(sub, 'hookrelay.json'), JSON.stringify(config));
        const started = await startProcess([BIN, 'serve', '--config', path.join(sub, 'hookrelay.json')], `http://127.0.0.1:${port}/healthz`, { timeoutMs: 120_000 });
        servers.push({ server: { instances: [{ port, ...started }] }, last: n - 1 });
      }
      const opts = ({ server, last }: (typeof servers)[number]) => request({
        name: `mappings-${by}`, path: '/many', accepted: true,
        body: () => JSON.stringify(by === 'source' ? { id: 7, source: `s${last}` } : { id: 7 }),
        headers: (): Record<string, string> => (by === 'header' ? { 'x-kind': `k${last}` } : {}),
      }, server.instances[0]!.port, 'hr');
      const alone = async <T>(running: Server, fn: () => Promise<T>): Promise<T> => {
        for (const { server } of servers) if (server !== running) server.instances[0]!.proc.kill('SIGSTOP');
        try {
          return await fn();
        } finally {
          for (const { server } of servers) if (server !== running) server.instances[0]!.proc.kill('SIGCONT');
        }
      };
      for (const s of servers) await alone(s.server, () => load(opts(s), WARM_UP_SECONDS));
      const rounds: Figures[][] = [[], []];
      for (let r = 0; r < ROUNDS; r++) {
        // The order turns every round, as in the scenarios.
        for (const i of r % 2 ? [1, 0] : [0, 1]) rounds[i]!.push(await alone(servers[i]!.server, () => measure([opts(servers[i]!)], servers[i]!.server)));
      }
      const [one, many] = [summarise(rounds[0]!), summarise(rounds[1]!)];
      const cpu = paired(of(rounds[0]!, 'cpuUs'), of(rounds[1]!, 'cpuUs'));
      out[by] = { mappings: MAPPINGS, oneCpuUs: one.cpuUs, manyCpuUs: many.cpuUs, cpu };
      log(`  mappings   the last of ${fmt(MAPPINGS)} mappings on one path by ${by}: CPU ${many.cpuUs} µs per request against ${one.cpuUs} with one mapping (${cpu.toFixed(2)}×, statuses ${statuses(many.statuses)}) ${cpu <= 1.15 ? '✓' : '✗'}`);
    } finally {
      await Promise.all(servers.map((s) => stop(s.server)));
    }
  }
  return out;
}

const binFlags = (bin: string) =>
  /^#!.*\bnode\b(.*)$/m.exec(fs.readFileSync(bin, 'utf8').split('\n')[0]!)?.[1]!.trim().split(/\s+/).filter(Boolean) ?? [];

async function startProcess(argv: string[], health: string, o: { anyStatus?: boolean; timeoutMs?: number } = {}) {
  // Each build with its own bin's flags (--against REV's too: without its --max-semi-space-size
  // a build does fewer, larger scavenges and looks ~10 % cheaper than the same code with it).
  const node = [process.execPath, ...(argv[0]!.endsWith('bin.mjs') ? binFlags(argv[0]!) : [])];
  const [cmd, rest] = hasTaskset ? ['taskset', ['-c', SERVER_CPU, ...node, ...argv]] : [node[0]!, [...node.slice(1), ...argv]];
  // The default log level (info: an access line per request), drained by this process on the
  // load generator's core, as a log collector would; only the tail is kept, for a failed start.
  const proc = spawn(cmd, rest, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => { err = (err + d).slice(-4000); });
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  const deadline = Date.now() + (o.timeoutMs ?? 20000);
  for (;;) {
    try {
      const r = await fetch(health);
      if (r.status === 200 || o.anyStatus) break;
    } catch { /* not yet */ }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`${argv[0]} did not start: ${err.slice(-2000)}`);
    await sleep(5);
  }
  return { proc, exited };
}

function compare(prev: any, cur: any) {
  log(`\ncompared with the previous run (${prev.date}):`);
  for (const [name, r] of Object.entries<any>(cur.results)) {
    const p = prev.results?.[name];
    if (!p?.ratio || !r.ratio) continue;
    log(`  ${name.padEnd(10)} ratio ${p.ratio} → ${r.ratio} (${r.ratio >= p.ratio ? '+' : ''}${((r.ratio / p.ratio - 1) * 100).toFixed(1)} %)`);
  }
}

function printTable(rows: string[][], vs?: string, pg?: string) {
  const head = ['scenario', 'bare req/s', 'durable req/s', 'observed req/s', `hookrelay req/s${STORE === 'postgres' ? ` (${PG_LABEL})` : ''}`, 'of durable (req/s)', 'CPU × durable', 'of observed (req/s)', 'CPU × observed', 'of bare (req/s)', 'target', ...(pg ? [pg] : []), ...(vs ? [`ratio ${vs}`] : []), 'p50/p99 ms', 'CPU µs/req bare / durable / observed / hookrelay', 'RSS MiB idle (with workers) / peak', 'steal %', 'statuses'];
  log(`\n| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|`);
  for (const r of rows) log(`| ${r.join(' | ')} |`);
}

/** The target table (targets.ts): ✓ / ✗ per target of issue 34. */
function printTargets(rows: [string, string, string][]) {
  log(`\ntargets (issue 34; ratios are medians over the rounds of each round's pair):\n| target | this run | |\n|---|---|---|`);
  for (const r of rows) log(`| ${r.join(' | ')} |`);
}

/** One figure of every round, in round order (stats.ts pairs them round by round). */
const of = (rounds: Figures[], key: 'rps' | 'cpuUs') => rounds.map((f) => f[key]);
const statuses = (s: Record<string, number>) => Object.keys(s).sort().join(', ');
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

const cpuText = (c: PairedCpu) => `${pct(c.median)} per request (rounds ${pct(c.low)} … ${pct(c.high)})`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const log = (s: string) => process.stdout.write(`${s}\n`);

main().catch((e) => {
  process.stderr.write(`bench failed: ${e.stack ?? e}\n`);
  process.exit(1);
});
