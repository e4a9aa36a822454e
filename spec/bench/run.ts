/**
 * `npm run bench`: hookrelay side by side with four baselines — bare node:http (baseline.mjs),
 * the durable one (durable-baseline.mjs: the same plus one row per event in grouped commits,
 * WAL, synchronous=FULL), the observed one (observed-baseline.mjs: the durable one plus a
 * request-log row in the same commit, a pino access line and prom-client metrics) and the same
 * served through Koa and @koa/router (observed-baseline.mjs `koa`: the framework's own cost) — measured
 * alternately in the same rounds, on the same core, with the same load generator (autocannon,
 * in this process, on the other core where taskset exists). hookrelay runs its default config
 * (access log at info, drained by this process, metrics and console on). The parts
 * (`--scenario`, every one by default):
 *
 *   paths      each request path of scenarios.ts (`--only` picks some) at full load: req/s
 *              (median of the rounds), p50/p99, CPU per request and peak RSS (of the server with
 *              its transform workers, each page once: rssMiB), and the ratios against each
 *              baseline (each the median over the rounds of that round's pair); then each
 *              accepted path and the durable baseline at a fixed `--rate` (autocannon `-R`,
 *              which corrects the latencies for coordinated omission:
 *              https://github.com/mcollina/autocannon#usage), their p99s paired by round
 *   soak       `--soak` /wake requests, RSS sampled throughout
 *   startup    spawn to the first 200 from /healthz with 100 and with 5,000 mappings
 *   mappings   the last of `--mappings` mappings on one path, told apart by source or a header,
 *              against one mapping (mappingsCurve)
 *   store, reads, retention   the store's scenarios (store-scenarios.ts)
 *
 * then the target table (targets.ts). A default full run (no --scenario, --only or --store)
 * writes the figures to last-run.json and compares them with the previous run's.
 *
 * Each path gets a fresh server on a fresh data directory: the runs and heartbeats an earlier
 * path queued (the fake model takes a second per turn, so a 20 s /agent load leaves hours of
 * work) would otherwise still be worked off on the same core, and a figure would depend on what
 * ran before it.
 *
 * `--against REV` also measures hookrelay as of git revision REV (checked out into a
 * temporary worktree, sharing this node_modules) in the same rounds, alternating with this
 * tree, and prints this tree's ratio against it: how a change moved each path, on the same
 * machine in the same minutes. It also prints the change of CPU per request from each round's
 * pair (median, lowest and highest round): the steadier figure on a machine whose speed drifts,
 * so use more, shorter rounds (`--rounds 8 --duration 3`) to compare builds. REV's server is
 * given only the mapping of the path it is measured on; a path REV cannot serve (a mapping it
 * refuses) is measured without it.
 *
 * `--store postgres` measures the paths on PostgreSQL instead of SQLite, `--store both` on both in
 * the same rounds (the PostgreSQL row also gets its ratio to SQLite): each path's servers on
 * a fresh database of the test server (HOOKRELAY_TEST_PG_URL, else a throwaway cluster started
 * and stopped by spec/support/postgres.ts). `--instances 2` starts two servers on that one
 * database, pinned to the same core as one, and splits the load generator's connections
 * between them (one autocannon per server, in parallel, summed). The other parts stay SQLite's.
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
import { prepareStores, readsBeside, retentionUnderLoad, storeGrowth, type StoreBench } from './store-scenarios.js';
import { OBSERVED_TARGETS, P99_TARGET, REFUSAL_TARGET, targetRows, type Judged, type Measured } from './targets.js';
import { cpuMs, rssMiB, stealTicks } from './proc.js';
import { median, paired, pairedCpu, round, type PairedCpu } from './stats.js';

const args = process.argv.slice(2);
const PARTS = ['paths', 'soak', 'startup', 'mappings', 'store', 'reads', 'retention'];
const PATHS = SCENARIOS.map((s) => s.name);
const USAGE = `npm run bench [-- OPTIONS]   (no options: every part, about 25 minutes; docs/performance.md)

  --scenario LIST    the parts to run, of: ${PARTS.join(', ')} (default: all)
                       paths      each request path against the baselines, at full load and at --rate
                       soak       --soak /wake requests, RSS throughout
                       startup    ready with 100 and with 5,000 mappings
                       mappings   the last of --mappings mappings on one path against one mapping
                       store      bytes the store grows per /wake
                       reads      /wake p99 with console and /metrics reads beside it, seeded store against empty
                       retention  a purge of 2 M aged rows under /wake at 2,000 req/s
  --only LIST        the request paths of the paths part, of: ${PATHS.join(', ')}
                       (default: all; alone it means --scenario paths)
  --rounds N         rounds per measurement, every server once per round (3)
  --duration S       seconds of load per server and round (5)
  --connections N    connections of the full-load measurements (32)
  --rate R           the paths' fixed-rate pass, req/s (2000; 0 skips it)
  --rate-rounds N    rounds of that pass (2)
  --soak N           requests of the soak (200000)
  --mappings N       mappings on one path in the mappings part (5000)
  --seed-scale X     share of the issue's store sizes to seed for reads and retention, 0 < X ≤ 1,
                       or "small" (0.01); below 1 their rows are shown but not judged (1)
  --against REV      also measure git revision REV in the same rounds (paths)
  --store KIND       sqlite, postgres or both (paths; default sqlite)
  --instances N      servers on one PostgreSQL database (paths; default 1)`;
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const OPTIONS = ['--scenario', '--only', '--rounds', '--duration', '--connections', '--rate', '--rate-rounds', '--soak', '--mappings', '--seed-scale', '--against', '--store', '--instances'];
const usageError = (message: string): never => {
  process.stderr.write(`bench: ${message}\n${USAGE}\n`);
  process.exit(2);
};
for (let i = 0; i < args.length; i += 2) {
  if (!OPTIONS.includes(args[i]!) || args[i + 1] === undefined) usageError(OPTIONS.includes(args[i]!) ? `${args[i]} takes a value` : `unknown option ${args[i]}`);
}
const value = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : undefined);
const opt = (name: string, dflt: number) => (value(name) === undefined ? dflt : Number(value(name)));
const list = (name: string, known: string[]) => {
  const v = value(name)?.split(',');
  for (const x of v ?? []) if (!known.includes(x)) usageError(`--${name}: ${x} is not one of ${known.join(', ')}${name === 'only' && PARTS.includes(x) ? ` (${x} is a --scenario)` : ''}`);
  return v;
};
const only = list('only', PATHS);
const scenarios = list('scenario', PARTS) ?? (only ? ['paths'] : PARTS);
if (only && !scenarios.includes('paths')) usageError('--only picks request paths of the paths part: add paths to --scenario');
/** True when the part `name` is to run. */
const runs = (name: string) => scenarios.includes(name);
const against = value('against');
const ROUNDS = opt('rounds', 3);
const DURATION = opt('duration', 5);
const CONNECTIONS = opt('connections', 32);
const SOAK = opt('soak', 200_000);
const STORE = value('store') ?? 'sqlite';
const INSTANCES = opt('instances', 1);
const RATE = opt('rate', 2000);
const RATE_ROUNDS = opt('rate-rounds', 2);
const SEED_SCALE = value('seed-scale') === 'small' ? 0.01 : opt('seed-scale', 1);
/** The `mappings` part's count of mappings on one path. */
const MAPPINGS = opt('mappings', 5000);
for (const [name, n, min] of [['rounds', ROUNDS, 1], ['duration', DURATION, 1], ['rate-rounds', RATE_ROUNDS, 1], ['soak', SOAK, 0], ['mappings', MAPPINGS, 2]] as const) {
  if (!(Number.isInteger(n) && n >= min)) usageError(`--${name}: a whole number of at least ${min}, not ${n}`);
}
if (!(Number.isFinite(RATE) && RATE >= 0)) usageError(`--rate: requests per second (0 skips the fixed-rate pass), not ${RATE}`);
if (!(SEED_SCALE > 0 && SEED_SCALE <= 1)) usageError(`--seed-scale: a share above 0 and at most 1, or small, not ${value('seed-scale')}`);
if (!['sqlite', 'postgres', 'both'].includes(STORE)) usageError(`--store: sqlite, postgres or both, not ${STORE}`);
if (!(Number.isInteger(INSTANCES) && INSTANCES >= 1 && INSTANCES <= CONNECTIONS)) usageError(`--instances: a whole number from 1 to --connections, not ${INSTANCES}`);
if (INSTANCES > 1 && STORE === 'sqlite') usageError('--instances needs --store postgres or both: a SQLite store has one instance');
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
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
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

  const t0 = performance.now();
  log(`hookrelay bench — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'}); parts: ${scenarios.join(', ')}`);
  log(`${hasTaskset ? `servers on cpu ${SERVER_CPU}, load generator on cpu 1` : 'no taskset: servers and generator share the cpus'}; ${ROUNDS} rounds × ${DURATION} s per server${runs('paths') ? ` (paths: ${CONNECTIONS} connections${RATE ? `, then ${RATE_ROUNDS} rounds at ${RATE} req/s` : ''})` : ''}${SEED_SCALE !== 1 ? `; seed scale ${SEED_SCALE}` : ''}${other ? `; against ${against} (${other.rev})` : ''}`);

  const judged: Record<string, Judged> = {};
  const results: Record<string, unknown> = {};
  const table: string[][] = [];
  if (runs('paths')) {
    const baseline = await startProcess([path.join(ROOT, 'spec/bench/baseline.mjs'), String(basePort), TOKEN, String(maxBody)], `http://127.0.0.1:${basePort}/healthz`, { anyStatus: true });
    const bare: Server = { instances: [{ port: basePort, ...baseline }] };
    const durablePort = await freePort();
    const durable: Server = { instances: [{ port: durablePort, ...(await startProcess([path.join(ROOT, 'spec/bench/durable-baseline.mjs'), String(durablePort), TOKEN, String(maxBody), path.join(dir, 'durable-baseline')], `http://127.0.0.1:${durablePort}/healthz`, { anyStatus: true })) }] };
    const observedPort = await freePort();
    const observed: Server = { instances: [{ port: observedPort, ...(await startProcess([path.join(ROOT, 'spec/bench/observed-baseline.mjs'), String(observedPort), TOKEN, String(maxBody), path.join(dir, 'observed-baseline')], `http://127.0.0.1:${observedPort}/healthz`, { anyStatus: true })) }] };
    // The observed baseline's work served through Koa and @koa/router: what the framework costs on its own.
    const koaPort = await freePort();
    const koa: Server = { instances: [{ port: koaPort, ...(await startProcess([path.join(ROOT, 'spec/bench/observed-baseline.mjs'), String(koaPort), TOKEN, String(maxBody), path.join(dir, 'koa-baseline'), 'koa'], `http://127.0.0.1:${koaPort}/healthz`, { anyStatus: true })) }] };
    try {
      for (const sc of SCENARIOS.filter((s) => !only || only.includes(s.name))) {
        // With --against both builds get the same config: only the path's mapping.
        const hookrelay = await serve(BIN, sc.name, other ? sc : undefined, STORE === 'postgres' ? 'postgres' : 'sqlite');
        const onPg = STORE === 'both' ? await serve(BIN, `${sc.name}-pg`, undefined, 'postgres') : undefined;
        const older = other ? await serve(other.bin, `${sc.name}-against`, sc).catch((e: Error) => {
          log(`  ${sc.name}: ${against} cannot serve this path (${e.message.split('\n').find((l) => l.trim()) ?? ''}); measured without it`);
          return undefined;
        }) : undefined;
        const servers = [hookrelay, ...(onPg ? [onPg] : []), ...(older ? [older] : [])];
        // Every server but the one measured is frozen (its background work too), so that each
        // gets the whole core: the baselines, this tree and REV alike.
        const alone = async <T>(running: unknown, fn: () => Promise<T>): Promise<T> => {
          for (const s of servers) if (s !== running) for (const i of s.instances) i.proc.kill('SIGSTOP');
          try {
            return await fn();
          } finally {
            for (const s of servers) if (s !== running) for (const i of s.instances) i.proc.kill('SIGCONT');
          }
        };
        // The fresh server before any load: the idle RSS target, on the gateway process alone
        // (its transform worker processes are shown beside it).
        const idleRss = Math.max(...hookrelay.instances.map((i) => rssMiB(i.proc.pid!, false)));
        const idleRssAll = Math.max(...hookrelay.instances.map((i) => rssMiB(i.proc.pid!)));
        const opts = (s: Server, kind: 'base' | 'hr') => s.instances.map((i, n) => request(sc, i.port, kind, share(n, s.instances.length)));
        const kindOf = (s: Server) => (s === bare || s === durable || s === observed || s === koa ? 'base' : 'hr');
        /** One measurement of `s`, alone on the core, at full load or at `rate`. */
        const one = (s: Server, rate = 0) => alone(s, () => measure(opts(s, kindOf(s)), s, rate));
        try {
          // Warm-up: JIT, caches, connection pools (WARM_UP_SECONDS says why so long).
          for (const s of [...servers, bare, durable, observed, koa]) await alone(s, () => Promise.all(opts(s, kindOf(s)).map((o) => load(o, WARM_UP_SECONDS))));
          const base: Figures[] = [];
          const dur: Figures[] = [];
          const obs: Figures[] = [];
          const koas: Figures[] = [];
          const hr: Figures[] = [];
          const pgs: Figures[] = [];
          const old: Figures[] = [];
          for (let r = 0; r < ROUNDS; r++) {
            base.push(await one(bare));
            obs.push(await one(observed));
            koas.push(await one(koa));
            // Every other round the order turns: what runs right after the baseline (or right after
            // another server) is measured differently enough to show a build 5–12 % slower than
            // itself (seen with --against HEAD), so no server keeps that place.
            const measureOlder = async () => { if (older) old.push(await one(older)); };
            const measureDurable = async () => { dur.push(await one(durable)); };
            if (r % 2 === 1) await measureOlder();
            else await measureDurable();
            hr.push(await one(hookrelay));
            if (onPg) pgs.push(await one(onPg));
            if (r % 2 === 0) await measureOlder();
            else await measureDurable();
          }
          // The fixed-rate pass, accepted paths only: the durable baseline and each build at RATE,
          // the order turning every round; p99s paired by round.
          const at: Record<'dur' | 'hr' | 'pg' | 'old', Figures[]> = { dur: [], hr: [], pg: [], old: [] };
          if (RATE && sc.accepted) {
            const order: [keyof typeof at, Server | undefined][] = [['dur', durable], ['hr', hookrelay], ['pg', onPg], ['old', older]];
            for (let r = 0; r < RATE_ROUNDS; r++) {
              for (const [key, s] of r % 2 ? [...order].reverse() : order) if (s) at[key].push(await one(s, RATE));
            }
          }
          const fixed = at.hr.length ? {
            rate: RATE, durableP99: round(median(of(at.dur, 'p99')), 1), p99: round(median(of(at.hr, 'p99')), 1), ratio: paired(of(at.dur, 'p99'), of(at.hr, 'p99')),
            ...(at.pg.length ? { pgP99: round(median(of(at.pg, 'p99')), 1) } : {}),
            ...(at.old.length ? { againstP99: round(median(of(at.old, 'p99')), 1) } : {}),
            stealPct: Math.max(...[...at.dur, ...at.hr].map((f) => f.stealPct)),
            statuses: statuses(summarise(at.hr).statuses),
          } : undefined;
          const b = summarise(base);
          const h = summarise(hr);
          const o = older ? summarise(old) : undefined;
          const pgF = onPg ? summarise(pgs) : undefined;
          const pgVs = pgF ? { instances: INSTANCES, hookrelay: pgF, ratio: round(pgF.rps / b.rps, 3), toSqlite: round(pgF.rps / h.rps, 3) } : undefined;
          const d = summarise(dur);
          const ob = summarise(obs);
          const k = summarise(koas);
          const ratio = h.rps / b.rps;
          // Against each baseline, round by round: each round's pair ran minutes apart at most.
          const vsObserved = { rps: paired(of(obs, 'rps'), of(hr, 'rps')), cpu: paired(of(obs, 'cpuUs'), of(hr, 'cpuUs')) };
          const vsDurable = { rps: paired(of(dur, 'rps'), of(hr, 'rps')), cpu: paired(of(dur, 'cpuUs'), of(hr, 'cpuUs')) };
          const vsBare = { rps: paired(of(base, 'rps'), of(hr, 'rps')), cpu: paired(of(base, 'cpuUs'), of(hr, 'cpuUs')) };
          const vsKoa = { rps: paired(of(koas, 'rps'), of(hr, 'rps')), cpu: paired(of(koas, 'cpuUs'), of(hr, 'cpuUs')), koaOfObserved: paired(of(obs, 'rps'), of(koas, 'rps')) };
          // Accept paths against the observed baseline, refusals against bare node:http (targets.ts).
          const target = OBSERVED_TARGETS[sc.name] ?? (sc.name === 'unauthorized' ? REFUSAL_TARGET : undefined);
          const measured = sc.name in OBSERVED_TARGETS ? vsObserved.rps : vsBare.rps;
          const verdict = target === undefined ? '' : `${measured >= target ? '≥' : '<'} ${target} of ${sc.name in OBSERVED_TARGETS ? 'observed' : 'bare'} ${measured >= target ? '✓' : '✗'}`;
          // The CPU per request of the two builds, round by round: each round's pair ran back to
          // back, so the machine's drift cancels out of their difference far better than out of
          // medians of req/s.
          const vs = o ? { ratio: round(o.rps / b.rps, 3), change: round(h.rps / o.rps - 1, 3), cpu: pairedCpu(of(old, 'cpuUs'), of(hr, 'cpuUs')) } : undefined;
          results[sc.name] = { store: STORE === 'postgres' ? PG_LABEL : 'sqlite', baseline: b, durable: d, observed: ob, koa: k, hookrelay: h, ratio: round(ratio, 3), vsDurable, vsObserved, vsBare, vsKoa, fixed, idleRssMiB: round(idleRss, 1), idleRssWithWorkersMiB: round(idleRssAll, 1), target, ...(pgVs ? { postgres: pgVs } : {}), ...(o ? { against: { rev: other!.rev, hookrelay: o, ...vs } } : {}) };
          const steal = Math.max(b.stealPct, d.stealPct, ob.stealPct, k.stealPct, h.stealPct, o?.stealPct ?? 0, pgF?.stealPct ?? 0);
          if (STORE !== 'postgres') judged[sc.name] = { accepted: sc.accepted, observed: vsObserved, durable: vsDurable, bare: vsBare, ...(fixed ? { fixed } : {}), stealPct: steal, rssMiB: h.rssMiB, idleRssMiB: idleRss };
          const fixedText = fixed ? `${fixed.p99} / ${fixed.durableP99} (${fixed.ratio.toFixed(2)}×)${fixed.againstP99 !== undefined ? `; ${against} ${fixed.againstP99}` : ''}${fixed.pgP99 !== undefined ? `; ${PG_LABEL} ${fixed.pgP99}` : ''}` : '';
          const pgText = pgVs ? `${fmt(pgVs.hookrelay.rps)} (${pgVs.ratio.toFixed(2)}; ${pgVs.toSqlite.toFixed(2)} of SQLite), p50/p99 ${pgF!.p50} / ${pgF!.p99}, CPU ${pgF!.cpuUs}, ${statuses(pgF!.statuses)}` : '';
          const vsText = vs ? `${vs.ratio.toFixed(2)} → ${ratio.toFixed(2)} (${pct(vs.change)}); CPU ${cpuText(vs.cpu)}` : '';
          table.push([sc.name, fmt(b.rps), fmt(d.rps), fmt(ob.rps), `${fmt(k.rps)} (${vsKoa.koaOfObserved.toFixed(2)})`, fmt(h.rps), vsObserved.rps.toFixed(2), `${vsObserved.cpu.toFixed(2)}×`, vsKoa.rps.toFixed(2), `${vsKoa.cpu.toFixed(2)}×`, vsDurable.rps.toFixed(2), `${vsDurable.cpu.toFixed(2)}×`, vsBare.rps.toFixed(2), verdict, ...(onPg ? [pgText] : []), ...(other ? [vsText] : []), `${h.p50} / ${h.p99}`, fixedText, `${b.cpuUs} / ${d.cpuUs} / ${ob.cpuUs} / ${k.cpuUs} / ${h.cpuUs}`, `${idleRss.toFixed(0)} (${idleRssAll.toFixed(0)}) / ${h.rssMiB.toFixed(0)}`, `${steal}`, statuses(h.statuses)]);
          log(`  ${sc.name.padEnd(10)} bare ${fmt(b.rps)} req/s, durable ${fmt(d.rps)}, observed ${fmt(ob.rps)}, Koa ${fmt(k.rps)} (${vsKoa.koaOfObserved.toFixed(2)} of observed), hookrelay ${fmt(h.rps)}: ${vsObserved.rps.toFixed(2)} of observed ${verdict} (CPU ${vsObserved.cpu.toFixed(2)}×), ${vsKoa.rps.toFixed(2)} of Koa (CPU ${vsKoa.cpu.toFixed(2)}×), ${vsDurable.rps.toFixed(2)} of durable (CPU ${vsDurable.cpu.toFixed(2)}×), ${vsBare.rps.toFixed(2)} of bare${pgVs ? `, ${PG_LABEL} ${fmt(pgVs.hookrelay.rps)} req/s, ratio ${pgVs.ratio.toFixed(2)} (${pgVs.toSqlite.toFixed(2)} of SQLite), p50/p99 ${pgF!.p50}/${pgF!.p99} ms, CPU ${pgF!.cpuUs} µs, statuses ${statuses(pgF!.statuses)}` : ''}${vs ? `, ${against} ${vs.ratio.toFixed(2)} (${pct(vs.change)}, CPU ${o!.cpuUs} µs, p50/p99 ${o!.p50}/${o!.p99} ms; paired CPU ${cpuText(vs.cpu)})` : ''}, p50/p99 ${h.p50}/${h.p99} ms${fixed ? `, p99 at ${RATE} req/s ${fixedText} of durable, statuses ${fixed.statuses}` : ''}, CPU ${b.cpuUs} / ${d.cpuUs} / ${ob.cpuUs} / ${k.cpuUs} / ${h.cpuUs} µs per request, RSS ${h.rssMiB.toFixed(0)} MiB, steal ${steal} %`);
        } finally {
          await Promise.all(servers.map(stop));
        }
      }
    } finally {
      await Promise.all([bare, durable, observed, koa].map(stop));
      await stopSharedCluster();
    }
  }
  try {
    if (runs('soak') && SOAK > 0) {
      const hookrelay = await serve(BIN, 'soak');
      try {
        results.soak = await soak(hookrelay.instances[0]!.port, hookrelay.instances[0]!.proc);
      } finally {
        await stop(hookrelay);
      }
    }
    if (runs('startup')) results.startup = await startup(dir, model.baseUrl);
  } finally {
    await model.close();
    other?.remove();
  }
  if (runs('mappings')) results.mappings = await mappingsCurve(dir, model.baseUrl);
  const storeBench: StoreBench = {
    dir, rounds: ROUNDS, duration: DURATION, warmUpSeconds: WARM_UP_SECONDS, seedScale: SEED_SCALE, log,
    start: (file, health) => startProcess([BIN, 'serve', '--config', file], health, { timeoutMs: 120_000 }),
  };
  if (['store', 'reads', 'retention'].some(runs)) await prepareStores(storeBench);
  if (runs('store')) results.store = await storeGrowth(storeBench);
  if (runs('reads')) results.reads = await readsBeside(storeBench);
  if (runs('retention')) results.retention = await retentionUnderLoad(storeBench);

  if (table.length) printTable(table, other ? `vs ${against}` : undefined, onPgColumn());
  const measured = results as Measured;
  printTargets(targetRows(judged, { ...measured, soakPeakMiB: measured.soak?.rssPeakMiB, rate: RATE }));
  const minutes = round((performance.now() - t0) / 60_000, 1);
  log(`\nthe run took ${minutes} min`);
  const previous = fs.existsSync(RESULTS) ? JSON.parse(fs.readFileSync(RESULTS, 'utf8')) : undefined;
  const out = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, taskset: hasTaskset, connections: CONNECTIONS, rounds: ROUNDS, durationSeconds: DURATION, rate: RATE, rateRounds: RATE_ROUNDS, seedScale: SEED_SCALE, store: STORE, instances: INSTANCES, minutes, results };
  // last-run.json is the default run's record: a partial or PostgreSQL run would not compare.
  const save = !value('scenario') && !only && STORE === 'sqlite' && RATE === 2000 && SEED_SCALE === 1;
  if (previous && save) compare(previous, out);
  if (save) fs.writeFileSync(RESULTS, `${JSON.stringify(out, null, 2)}\n`);
  log(save ? `figures written to ${path.relative(ROOT, RESULTS)}` : '(not a default run: figures not saved)');
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
async function measure(loads: autocannon.Options[], s: Server, rate = 0): Promise<Figures> {
  const pids = s.instances.map((i) => i.proc.pid!);
  const cpuAll = () => pids.reduce((a, pid) => a + cpuMs(pid), 0);
  let peak = 0;
  const sample = () => { for (const pid of pids) peak = Math.max(peak, rssMiB(pid)); };
  const sampler = setInterval(sample, 200);
  const cpu0 = cpuAll();
  const steal0 = stealTicks();
  const rs = await Promise.all(loads.map((o) => load(rate ? { ...o, overallRate: rate / loads.length } : o, DURATION)));
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

/** Spawn → first 200 from /healthz, median of 5 starts, with 100 and with 5,000 mappings (templates, JSONata, a TS transform). */
async function startup(dir: string, modelUrl: string) {
  const out: Record<string, { mappings: number; medianMs: number; minMs: number; maxMs: number }> = {};
  for (const mappings of [100, 5000]) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const port = await freePort();
      const cfg = benchConfig({ dir, port, token: TOKEN, modelUrl, mappings, dataDir: path.join(dir, `startup-${mappings}-${i}`) });
      const file = path.join(dir, `startup-${mappings}-${i}.json`);
      fs.writeFileSync(file, JSON.stringify(cfg));
      const t0 = performance.now();
      const p = await startProcess([BIN, 'serve', '--config', file], `http://127.0.0.1:${port}/healthz`, { timeoutMs: 120_000 });
      times.push(performance.now() - t0);
      p.proc.kill('SIGTERM');
      await p.exited;
    }
    times.sort((a, b) => a - b);
    out[mappings] = { mappings, medianMs: Math.round(times[2]!), minMs: Math.round(times[0]!), maxMs: Math.round(times[4]!) };
    log(`  startup    ready in ${out[mappings]!.medianMs} ms (median of 5, ${out[mappings]!.minMs}–${out[mappings]!.maxMs}) with ${fmt(mappings)} mappings`);
  }
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
  const head = ['path', 'bare req/s', 'durable req/s', 'observed req/s', 'Koa req/s (of observed)', `hookrelay req/s${STORE === 'postgres' ? ` (${PG_LABEL})` : ''}`, 'of observed (req/s)', 'CPU × observed', 'of Koa (req/s)', 'CPU × Koa', 'of durable (req/s)', 'CPU × durable', 'of bare (req/s)', 'target', ...(pg ? [pg] : []), ...(vs ? [`ratio ${vs}`] : []), 'p50/p99 ms', `p99 ms at ${RATE} req/s / durable's (×)`, 'CPU µs/req bare / durable / observed / Koa / hookrelay', 'RSS MiB idle (with workers) / peak', 'steal %', 'statuses'];
  log(`\n| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|`);
  for (const r of rows) log(`| ${r.join(' | ')} |`);
}

/** The target table (targets.ts): ✓ / ✗ / n/a per target. */
function printTargets(rows: [string, string, string][]) {
  log(`\ntargets (ratios are medians over the rounds of each round's pair, baselines in the same run):\n| target | this run | |\n|---|---|---|`);
  for (const r of rows) log(`| ${r.join(' | ')} |`);
}

/** One figure of every round, in round order (stats.ts pairs them round by round). */
const of = (rounds: Figures[], key: 'rps' | 'cpuUs' | 'p99') => rounds.map((f) => f[key]);
const statuses = (s: Record<string, number>) => Object.keys(s).sort().join(', ');
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

const cpuText = (c: PairedCpu) => `${pct(c.median)} per request (rounds ${pct(c.low)} … ${pct(c.high)})`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const log = (s: string) => process.stdout.write(`${s}\n`);

main().catch((e) => {
  process.stderr.write(`bench failed: ${e.stack ?? e}\n`);
  process.exit(1);
});
