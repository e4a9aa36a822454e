/** The embedded store's sliding 60 s window per key (ratePerMinute, CONTRACT.md §14), in the process: the data-directory lock makes it the only gateway on its store. */
export interface RateWindow {
  /** 0: admitted (and counted); else the ms until one more would be. */
  take(key: string, limit: number, now: number): number;
  /** Gives back the newest admitted place of `key` (Store.returnRate). */
  give(key: string): void;
}

export const RATE_WINDOW_MS = 60_000;

export function createRateWindow(): RateWindow {
  /** Admitted times per key, oldest first; never longer than the largest limit asked for. */
  const hits = new Map<string, number[]>();
  return {
    take(key, limit, now) {
      let times = hits.get(key);
      if (times === undefined) hits.set(key, (times = []));
      let gone = 0;
      while (gone < times.length && times[gone]! <= now - RATE_WINDOW_MS) gone++;
      if (gone > 0) times.splice(0, gone);
      if (times.length >= limit) return Math.max(1, times[times.length - limit]! + RATE_WINDOW_MS - now);
      times.push(now);
      return 0;
    },
    give(key) {
      hits.get(key)?.pop();
    },
  };
}
