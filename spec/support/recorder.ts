import type { Server } from 'node:http';

/**
 * What the fake upstream servers share: a list of recorded calls that specs can wait on,
 * and a close that does not wait for keep-alive connections.
 */
export function createRecorder<T>(label: string) {
  const waiters: (() => void)[] = [];
  return {
    /** Wakes the waiters after something was recorded. */
    recorded(): void {
      waiters.splice(0).forEach((w) => w());
    },
    /** Resolves with `list()` once it holds at least `n` entries; rejects after `timeoutMs`. */
    waitFor(list: () => T[], n: number, timeoutMs: number, what: string): Promise<T[]> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${label}: ${list().length} of ${n} ${what} after ${timeoutMs} ms`)), timeoutMs);
        const check = () => {
          if (list().length >= n) {
            clearTimeout(timer);
            resolve(list().slice());
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
