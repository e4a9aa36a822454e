/**
 * The targets of issue 34, judged from one bench run. Every accept path is measured against
 * the durable baseline (durable-baseline.mjs: token, body, one row per event in grouped
 * commits, WAL, synchronous=FULL) in the same rounds; refusals against the bare node:http one
 * (baseline.mjs). A ratio is the median over the rounds of that round's pair: each round's
 * two servers ran back to back, so the machine's drift cancels out of their ratio.
 */

/** One scenario's figures as the target table reads them. */
export interface Judged {
  /** Answers that accept work (the p99 target applies). */
  accepted: boolean;
  /** hookrelay against the durable baseline: req/s ratio, and CPU per request as a multiple. */
  durable: { rps: number; cpu: number };
  /** hookrelay against bare node:http. */
  bare: { rps: number; cpu: number };
  p99: number;
  stealPct: number;
  /** Peak RSS under the load (with transform worker processes, each page once: run.ts rssMiB), and RSS of the fresh gateway process before any load, MiB. */
  rssMiB: number;
  idleRssMiB: number;
}

/** Req/s of hookrelay as a share of the durable baseline's, per accept path (issue 34). */
export const DURABLE_TARGETS: Record<string, number> = { wake: 0.9, agent: 0.8, handlebars: 0.7, transform: 0.6, jsonata: 0.5 };
/** `/wake`'s CPU per request at most this multiple of the durable baseline's. */
export const WAKE_CPU_TARGET = 1.25;
/** 401/429 req/s as a share of bare node:http's. */
export const REFUSAL_TARGET = 0.8;
export const P99_TARGET_MS = 10;
/** The p99 target is judged only when the hypervisor's steal stayed below this. */
export const P99_MAX_STEAL_PCT = 5;
/**
 * A ratio target is passed only when its scenario's steal stayed below this: under heavy
 * steal a baseline's round can collapse (a durable baseline measured at 2,533 req/s instead of
 * ~8,600, its CPU per request doubled) and hand hookrelay a ratio it does not have — a run at
 * 39.5 % steal showed Handlebars at 0.77 of durable, a re-run at 4 % 0.45.
 */
export const RATIO_MAX_STEAL_PCT = 20;
export const RSS_TARGET_MIB = 150;
export const IDLE_RSS_TARGET_MIB = 100;
export const READY_TARGET_MS = 1000;

const ok = (pass: boolean) => (pass ? '✓' : '✗');
/** A ratio target's verdict: a pass under heavy steal is not one (RATIO_MAX_STEAL_PCT). */
const judged = (pass: boolean, f: Judged) => (!pass ? '✗' : f.stealPct >= RATIO_MAX_STEAL_PCT ? `n/a (steal ${f.stealPct} %)` : '✓');
const NOT_RUN = 'not measured in this run';

/** The target table's rows: target, what this run measured, ✓ / ✗ / n/a. */
export function targetRows(s: Record<string, Judged>, o: { soakPeakMiB?: number; readyMs?: number }): [string, string, string][] {
  const rows: [string, string, string][] = [];
  const wake = s.wake;
  rows.push([`\`/wake\` ≥ ${DURABLE_TARGETS.wake} of durable req/s, CPU ≤ ${WAKE_CPU_TARGET}× durable`,
    wake ? `${wake.durable.rps.toFixed(2)}, CPU ${wake.durable.cpu.toFixed(2)}×` : NOT_RUN,
    wake ? judged(wake.durable.rps >= DURABLE_TARGETS.wake! && wake.durable.cpu <= WAKE_CPU_TARGET, wake) : '']);
  const names: Record<string, string> = { agent: '`/agent` accept', handlebars: 'mapped Handlebars', transform: 'mapped TS transform', jsonata: 'mapped JSONata' };
  for (const [name, label] of Object.entries(names)) {
    const f = s[name];
    rows.push([`${label} ≥ ${DURABLE_TARGETS[name]} of durable req/s`, f ? `${f.durable.rps.toFixed(2)} (CPU ${f.durable.cpu.toFixed(2)}×)` : NOT_RUN, f ? judged(f.durable.rps >= DURABLE_TARGETS[name]!, f) : '']);
  }
  const refused = s.unauthorized;
  rows.push([`401 / 429 ≥ ${REFUSAL_TARGET} of bare req/s`, refused ? `${refused.bare.rps.toFixed(2)} (CPU ${refused.bare.cpu.toFixed(2)}×)` : NOT_RUN, refused ? judged(refused.bare.rps >= REFUSAL_TARGET, refused) : '']);

  const accepted = Object.entries(s).filter(([, f]) => f.accepted);
  if (accepted.length === 0) rows.push([`p99 < ${P99_TARGET_MS} ms at 32 connections, accepted paths`, NOT_RUN, '']);
  else {
    const worst = accepted.reduce((a, b) => (b[1].p99 > a[1].p99 ? b : a));
    const failed = accepted.filter(([, f]) => f.stealPct < P99_MAX_STEAL_PCT && f.p99 >= P99_TARGET_MS);
    const steal = Math.max(...accepted.map(([, f]) => f.stealPct));
    const verdict = failed.length > 0 ? '✗' : steal >= P99_MAX_STEAL_PCT ? `n/a (steal ${steal} %)` : '✓';
    rows.push([`p99 < ${P99_TARGET_MS} ms at 32 connections, accepted paths (when steal < ${P99_MAX_STEAL_PCT} %)`,
      `worst ${worst[1].p99} ms (${worst[0]})${failed.length ? `; over: ${failed.map(([n, f]) => `${n} ${f.p99}`).join(', ')}` : ''}`, verdict]);
  }
  const all = Object.entries(s);
  if (all.length === 0) rows.push([`RSS < ${RSS_TARGET_MIB} MiB under every scenario`, NOT_RUN, '']);
  else {
    const [name, f] = all.reduce((a, b) => (b[1].rssMiB > a[1].rssMiB ? b : a));
    const peak = Math.max(f.rssMiB, o.soakPeakMiB ?? 0);
    rows.push([`RSS < ${RSS_TARGET_MIB} MiB under every scenario`, `peak ${peak.toFixed(0)} MiB (${peak === f.rssMiB ? name : 'soak'})`, ok(peak < RSS_TARGET_MIB)]);
    const idle = Math.max(...all.map(([, x]) => x.idleRssMiB));
    rows.push([`RSS < ${IDLE_RSS_TARGET_MIB} MiB idle`, `${idle.toFixed(0)} MiB (a fresh gateway process, highest)`, ok(idle < IDLE_RSS_TARGET_MIB)]);
  }
  rows.push([`ready < ${READY_TARGET_MS / 1000} s with 100 mappings`, o.readyMs === undefined ? NOT_RUN : `${o.readyMs} ms (median of 5)`, o.readyMs === undefined ? '' : ok(o.readyMs < READY_TARGET_MS)]);
  return rows;
}
