/**
 * The bench's targets (docs/performance.md), judged from one run. Accept paths are measured
 * against the observed baseline (observed-baseline.mjs: the durable commit, a request-log row in
 * it, an access line, metrics) for req/s and against the durable one (durable-baseline.mjs) for
 * the p99 at a fixed rate; refusals against bare node:http (baseline.mjs); every baseline in the
 * same rounds. A ratio is the median over the rounds of that round's pair: each round's servers
 * ran back to back, so the machine's drift cancels out of their ratio. A target whose part did
 * not run says so.
 */

/** One request path's figures as the target table reads them. */
export interface Judged {
  /** Answers that accept work (the fixed-rate p99 target applies). */
  accepted: boolean;
  /** hookrelay against each baseline: req/s as a share, CPU per request as a multiple. */
  observed: { rps: number; cpu: number };
  durable: { rps: number; cpu: number };
  bare: { rps: number; cpu: number };
  /** The fixed-rate pass: hookrelay's and the durable baseline's p99 (ms) at `rate`, and their ratio paired by round. */
  fixed?: { rate: number; p99: number; durableP99: number; ratio: number; stealPct: number };
  stealPct: number;
  /** Peak RSS under the load (with transform worker processes, each page once: proc.ts rssMiB), and RSS of the fresh gateway process before any load, MiB. */
  rssMiB: number;
  idleRssMiB: number;
}

/** What the run's other parts measured (run.ts results; absent when the part did not run). */
export interface Measured {
  rate?: number;
  soakPeakMiB?: number;
  soak?: { rssPeakMiB: number };
  startup?: Record<string, { medianMs: number }>;
  mappings?: Record<string, { mappings: number; cpu: number }>;
  store?: { bytesPerWake: number; accepted: number };
  reads?: { rate: number; scale: number; emptyP99: number; seededP99: number; p99: number };
  retention?: { rate: number; scale: number; cpu: number; beforeCpuUs: number; duringCpuUs: number; seconds?: number; fileBefore: number; fileAfter: number };
}

/** Req/s of hookrelay as a share of the observed baseline's, per accept path. */
export const OBSERVED_TARGETS: Record<string, number> = { wake: 1.0, agent: 0.9, handlebars: 0.8, jsonata: 0.7, transform: 0.7 };
/** Every accepted path's p99 at P99_RATE at most this multiple of the durable baseline's at the same rate. */
export const P99_TARGET = 1.5;
export const P99_RATE = 2000;
/** 401/429 req/s as a share of bare node:http's. */
export const REFUSAL_TARGET = 0.6;
/** `/wake` p99 with reads beside it on the seeded store at most this multiple of the same on an empty one. */
export const READS_TARGET = 1.5;
export const MAPPINGS_TARGET = { mappings: 5000, cpu: 1.15 };
/** Ready (ms) by count of mappings. */
export const READY_TARGETS_MS: Record<string, number> = { 100: 1000, 5000: 2000 };
export const RETENTION_CPU_TARGET = 1.3;
export const STORE_BYTES_TARGET = 150;
export const RSS_TARGET_MIB = 150;
export const IDLE_RSS_TARGET_MIB = 100;
/**
 * A ratio target is passed only when its measurement's steal stayed below this: under heavy
 * steal a baseline's round can collapse (its CPU per request doubled) and hand hookrelay a
 * ratio it does not have.
 */
export const RATIO_MAX_STEAL_PCT = 20;

const ok = (pass: boolean) => (pass ? '✓' : '✗');
/** A ratio target's verdict: a pass under heavy steal is not one (RATIO_MAX_STEAL_PCT). */
const judged = (pass: boolean, stealPct: number) => (!pass ? '✗' : stealPct >= RATIO_MAX_STEAL_PCT ? `n/a (steal ${stealPct} %)` : '✓');
const NOT_RUN = 'not measured in this run';
const x = (n: number) => `${n.toFixed(2)}×`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The target table's rows: target, what this run measured, ✓ / ✗ / n/a. */
export function targetRows(s: Record<string, Judged>, o: Measured): [string, string, string][] {
  const rows: [string, string, string][] = [];
  const names: Record<string, string> = { wake: '`/wake` accept', agent: '`/agent` accept', handlebars: 'mapped Handlebars', jsonata: 'mapped JSONata', transform: 'mapped TS transform' };
  for (const [name, label] of Object.entries(names)) {
    const f = s[name];
    rows.push([`${label} ≥ ${OBSERVED_TARGETS[name]!.toFixed(1)} of the observed baseline's req/s`,
      f ? `${f.observed.rps.toFixed(2)} (CPU ${x(f.observed.cpu)})` : NOT_RUN, f ? judged(f.observed.rps >= OBSERVED_TARGETS[name]!, f.stealPct) : '']);
  }

  const fixed = Object.entries(s).filter(([, f]) => f.accepted && f.fixed);
  const p99Target = `p99 at ${P99_RATE.toLocaleString('en-US')} req/s, every accepted path ≤ ${P99_TARGET}× the durable baseline's at the same rate`;
  if (fixed.length === 0) rows.push([p99Target, o.rate === 0 ? `${NOT_RUN} (--rate 0)` : NOT_RUN, '']);
  else {
    const worst = fixed.reduce((a, b) => (b[1].fixed!.ratio > a[1].fixed!.ratio ? b : a));
    const over = fixed.filter(([, f]) => f.fixed!.ratio > P99_TARGET);
    const steal = Math.max(...fixed.map(([, f]) => f.fixed!.stealPct));
    const rate = worst[1].fixed!.rate;
    const text = `worst ${worst[0]} ${worst[1].fixed!.p99} ms against ${worst[1].fixed!.durableP99} (${x(worst[1].fixed!.ratio)})${over.length ? `; over: ${over.map(([n, f]) => `${n} ${x(f.fixed!.ratio)}`).join(', ')}` : ''}`;
    rows.push([p99Target, rate === P99_RATE ? text : `${text}, at ${rate} req/s`, rate === P99_RATE ? judged(over.length === 0, steal) : `n/a (--rate ${rate})`]);
  }

  const refused = s.unauthorized;
  rows.push([`401 / 429 ≥ ${REFUSAL_TARGET} of bare \`node:http\`'s req/s`, refused ? `${refused.bare.rps.toFixed(2)} (CPU ${x(refused.bare.cpu)})` : NOT_RUN, refused ? judged(refused.bare.rps >= REFUSAL_TARGET, refused.stealPct) : '']);

  const reads = o.reads;
  const readsTarget = `\`/wake\` p99 at 1,000 req/s with reads beside it, 1 M runs and 5 M requests ≤ ${READS_TARGET}× an empty store's`;
  if (!reads) rows.push([readsTarget, NOT_RUN, '']);
  else {
    const text = `${reads.seededP99} ms against ${reads.emptyP99} (${x(reads.p99)})`;
    rows.push([readsTarget, reads.scale === 1 ? text : `${text} on ${reads.scale} of the sizes (--seed-scale)`, reads.scale === 1 ? ok(reads.p99 <= READS_TARGET) : 'n/a (not the target\'s sizes)']);
  }

  const many = o.mappings;
  for (const by of ['source', 'header']) {
    const m = many?.[by];
    const label = `${MAPPINGS_TARGET.mappings.toLocaleString('en-US')} mappings on one path told apart by ${by === 'source' ? '`source`' : 'a header'}: CPU per request ≤ ${MAPPINGS_TARGET.cpu}× one mapping's`;
    if (!m) rows.push([label, NOT_RUN, '']);
    else rows.push([label, `${x(m.cpu)} with ${m.mappings.toLocaleString('en-US')}`, m.mappings === MAPPINGS_TARGET.mappings ? ok(m.cpu <= MAPPINGS_TARGET.cpu) : 'n/a (--mappings)']);
  }

  for (const [count, limit] of Object.entries(READY_TARGETS_MS)) {
    const r = o.startup?.[count];
    rows.push([`ready with ${Number(count).toLocaleString('en-US')} mappings < ${limit / 1000} s`, r ? `${r.medianMs} ms (median of 5)` : NOT_RUN, r ? ok(r.medianMs < limit) : '']);
  }

  const ret = o.retention;
  const retTarget = `a purge of 2 M rows under 2,000 req/s: CPU per request ≤ ${RETENTION_CPU_TARGET}× meanwhile; the file shrinks`;
  if (!ret) rows.push([retTarget, NOT_RUN, '']);
  else if (ret.seconds === undefined) rows.push([retTarget, 'the purge did not end within 10 minutes', '✗']);
  else {
    const text = `${x(ret.cpu)} (${ret.duringCpuUs} µs against ${ret.beforeCpuUs} before it, ${ret.seconds} s); file ${mib(ret.fileBefore)} → ${mib(ret.fileAfter)}`;
    const pass = ret.cpu <= RETENTION_CPU_TARGET && ret.fileAfter < ret.fileBefore;
    rows.push([retTarget, ret.scale === 1 ? text : `${text} on ${ret.scale} of the rows (--seed-scale)`, ret.scale === 1 ? ok(pass) : 'n/a (not the target\'s size)']);
  }

  const store = o.store;
  rows.push([`store growth per \`/wake\` ≤ ${STORE_BYTES_TARGET} bytes`, store ? `${store.bytesPerWake} bytes (over ${store.accepted.toLocaleString('en-US')})` : NOT_RUN, store ? ok(store.bytesPerWake <= STORE_BYTES_TARGET) : '']);

  const all = Object.entries(s);
  if (all.length === 0 && o.soakPeakMiB === undefined) rows.push([`RSS < ${RSS_TARGET_MIB} MiB under load`, NOT_RUN, '']);
  else {
    const [name, peak] = [...all.map(([n, f]) => [n, f.rssMiB] as const), ['soak', o.soakPeakMiB ?? 0] as const].reduce((a, b) => (b[1] > a[1] ? b : a));
    rows.push([`RSS < ${RSS_TARGET_MIB} MiB under load`, `peak ${peak.toFixed(0)} MiB (${name})`, ok(peak < RSS_TARGET_MIB)]);
  }
  if (all.length === 0) rows.push([`RSS < ${IDLE_RSS_TARGET_MIB} MiB idle`, NOT_RUN, '']);
  else {
    const idle = Math.max(...all.map(([, f]) => f.idleRssMiB));
    rows.push([`RSS < ${IDLE_RSS_TARGET_MIB} MiB idle`, `${idle.toFixed(0)} MiB (a fresh gateway process, highest)`, ok(idle < IDLE_RSS_TARGET_MIB)]);
  }
  return rows;
}
