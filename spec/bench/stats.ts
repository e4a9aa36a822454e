/**
 * The bench's statistics over rounds (run.ts): each round measures the servers back to back, so
 * a figure is taken per round's pair and the median over the rounds is reported.
 */

/**
 * The median: the middle value, the mean of the two middle ones for an even count. (Picking the
 * upper of the two, as the bench did, leaned every even-round figure one rank high: with 8
 * rounds a paired change was the 5th of 8.)
 */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * hookrelay's figure over the baseline's, round by round (each round's pair ran back to back),
 * median over the rounds: req/s as a share of the baseline's, CPU per request as a multiple.
 */
export function paired(baseRounds: readonly number[], hrRounds: readonly number[]): number {
  const xs = hrRounds.slice(0, baseRounds.length).map((h, i) => (baseRounds[i]! > 0 ? h / baseRounds[i]! : 0));
  return round(median(xs), 3);
}

/** This tree's CPU per request against REV's, from the rounds' pairs, as fractions: the median change, and the rounds' lowest and highest. */
export interface PairedCpu { median: number; low: number; high: number; rounds: number }

export function pairedCpu(older: readonly number[], newer: readonly number[]): PairedCpu {
  const changes = newer.slice(0, older.length).map((n, i) => n / older[i]! - 1);
  return { median: round(median(changes), 3), low: round(Math.min(...changes), 3), high: round(Math.max(...changes), 3), rounds: changes.length };
}

export const round = (n: number, d: number) => Math.round(n * 10 ** d) / 10 ** d;
