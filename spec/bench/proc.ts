/**
 * What the bench reads of a server from /proc (run.ts): its CPU time with its children's, the
 * machine's steal, and its resident memory with its children's, each page once.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/**
 * CPU time (user + system) the process has used so far, all threads, in ms — with its
 * children's: transform workers are processes of their own, and a figure without them would
 * flatter every transform path. Live children are read from /proc; those that ended and were
 * reaped are in the parent's cutime/cstime.
 */
export function cpuMs(pid: number): number {
  let ticks = 0;
  for (const p of family(pid)) {
    try {
      const fields = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + (p === pid ? Number(fields[13]) + Number(fields[14]) : 0);
    } catch { /* gone meanwhile */ }
  }
  return (ticks * 1000) / CLOCK_TICKS;
}

/**
 * `pid` and every process below it: /proc/PID/task/TID/children of every thread, since a
 * process started by another thread (esbuild's compiler service, started from its own
 * thread in a transform worker that compiles TypeScript) is listed only under that thread.
 */
function family(pid: number): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    try {
      for (const tid of fs.readdirSync(`/proc/${all[i]}/task`)) {
        for (const c of fs.readFileSync(`/proc/${all[i]}/task/${tid}/children`, 'utf8').split(' ')) if (c.trim()) all.push(Number(c));
      }
    } catch { /* gone meanwhile */ }
  }
  return all;
}

/** The machine's steal and total ticks so far (/proc/stat, first line). */
export function stealTicks(): { steal: number; total: number } {
  try {
    const cols = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { steal: cols[7] ?? 0, total: cols.slice(0, 8).reduce((a, b) => a + b, 0) };
  } catch {
    return { steal: 0, total: 0 };
  }
}

/**
 * Resident memory of the process, with its children's (transform workers) each page counted
 * once: the process's RSS, plus what each child alone holds (its USS: private clean and dirty
 * pages, /proc/PID/smaps_rollup). A child's other resident pages are shared ones — the node
 * binary's and the libraries' pages, which the gateway maps too — and adding its RSS instead
 * counted them twice (~41 MiB of a worker's ~52, measured: docs/performance.md).
 */
export function rssMiB(pid: number, withChildren = true): number {
  let kb = kbOf(`/proc/${pid}/status`, /VmRSS:\s+(\d+) kB/);
  if (withChildren) {
    for (const child of family(pid).slice(1)) {
      const rollup = `/proc/${child}/smaps_rollup`;
      kb += kbOf(rollup, /Private_Clean:\s+(\d+) kB/) + kbOf(rollup, /Private_Dirty:\s+(\d+) kB/);
    }
  }
  return kb / 1024;
}

/** The figure `pattern` finds in a /proc file, 0 when the process is gone meanwhile. */
function kbOf(file: string, pattern: RegExp): number {
  try {
    const m = pattern.exec(fs.readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}
