export interface WindowCount {
  count: number;
  /** The ms time at which the window ends and the count starts again. */
  resetAt: number;
}

export type AddressCounts = ReturnType<typeof createAddressCounts>;

/** Counts per client address over fixed windows, in at most `maxTracked` entries (the oldest forgotten), so no stranger can grow it. */
export function createAddressCounts(windowMs: number, maxTracked: number) {
  const table = new Map<string, WindowCount>();

  function sweep(now: number): void {
    for (const [address, e] of table) {
      if (e.resetAt > now) break;
      table.delete(address);
    }
    if (table.size >= maxTracked) table.delete(table.keys().next().value as string);
  }

  return {
    /** Counts one for `address` at `now` (ms): its entry in the current window (the table's own). */
    hit(address: string, now: number): Readonly<WindowCount> {
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
    /** The entry of `address` in its current window, or undefined when nothing counts now (none, or its window ended). */
    peek(address: string, now: number): Readonly<WindowCount> | undefined {
      const entry = table.get(address);
      return entry !== undefined && entry.resetAt > now ? entry : undefined;
    },
    /** Forgets `address` (its next hit starts a new window). */
    forget(address: string): void {
      if (table.size > 0) table.delete(address);
    },
    get size() {
      return table.size;
    },
  };
}
