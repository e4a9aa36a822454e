/**
 * Counts per client address over fixed windows — the failed-attempt budget (auth.ts) and the
 * request log's refusal budget (request-log.ts) — in a table a stranger cannot grow: a spray
 * of addresses makes at most `maxTracked` entries. An entry is (re)inserted when its window
 * starts, so the Map's insertion order is the order in which windows end: when the table is
 * full, the ended ones are dropped from its front, and if it is still full of live ones the
 * oldest is forgotten rather than the table growing — a few deletions, never a scan.
 */
export interface AddressCounts {
  /**
   * Counts one for `address` at `now` (ms) and returns its entry: the count within its current
   * window, this one included, and when that window ends. The entry is the table's own, not a
   * copy (nothing is allocated for an address already counted in its window).
   */
  hit(address: string, now: number): Readonly<WindowCount>;
  /** The entry of `address` in its current window, or undefined when nothing counts now (none, or its window ended). */
  peek(address: string, now: number): Readonly<WindowCount> | undefined;
  /** Forgets `address` (its next hit starts a new window). */
  forget(address: string): void;
  /** Addresses tracked now (at most `maxTracked`). */
  readonly size: number;
}

export interface WindowCount {
  count: number;
  /** The ms time at which the window ends and the count starts again. */
  resetAt: number;
}

export function createAddressCounts(windowMs: number, maxTracked: number): AddressCounts {
  const table = new Map<string, WindowCount>();

  function sweep(now: number): void {
    for (const [address, e] of table) {
      if (e.resetAt > now) break;
      table.delete(address);
    }
    if (table.size >= maxTracked) table.delete(table.keys().next().value as string);
  }

  return {
    hit(address, now) {
      let entry = table.get(address);
      if (entry === undefined || entry.resetAt <= now) {
        if (entry === undefined) {
          if (table.size >= maxTracked) sweep(now);
        } else {
          table.delete(address); // to the back: its new window ends last
        }
        entry = { count: 0, resetAt: now + windowMs };
        table.set(address, entry);
      }
      entry.count++;
      return entry;
    },
    peek(address, now) {
      const entry = table.get(address);
      return entry !== undefined && entry.resetAt > now ? entry : undefined;
    },
    forget(address) {
      if (table.size > 0) table.delete(address);
    },
    get size() {
      return table.size;
    },
  };
}
