import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from './store.js';

/** The lock file, beside `hookrelay.db` in the data directory. */
const LOCK_FILE = 'hookrelay.lock';

/** Lock files (`dev:ino`) this process holds. */
const held = new Set<string>();

/** Takes the data directory for as long as the process lives (or until `release()`): one server per store. */
export function lockDataDir(dataDir: string): { release(): void } {
  const file = join(dataDir, LOCK_FILE);
  const db = new Database(file, { timeout: 0 }); // busy_timeout 0: a held lock is SQLITE_BUSY at once
  let key: string;
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma(`user_version = ${process.pid}`); // the first write takes the EXCLUSIVE lock, kept after COMMIT
    const st = statSync(file);
    key = `${st.dev}:${st.ino}`;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      const pid = holderPid(file);
      const why = pid === process.pid
        ? `this process (pid ${pid}) already has a store open there; close that one first`
        : `another hookrelay process${pid ? ` (pid ${pid})` : ''} is using it; stop that process first, or give this one its own dataDir (one server per data directory)`;
      throw new StoreError('locked', `${dataDir}: ${why}`, { cause: err });
    }
    throw err;
  }
  held.add(key);
  let released = false;
  return {
    /** Gives the lock up; idempotent. */
    release: () => {
      if (released) return;
      released = true;
      held.delete(key);
      db.close();
    },
  };
}

/** The pid stored by the lock's holder, in the `user_version` header field (https://www.sqlite.org/fileformat2.html#user_version_number). */
function holderPid(file: string): number | undefined {
  try {
    const st = statSync(file);
    if (held.has(`${st.dev}:${st.ino}`)) return process.pid; // see `held`: never open it here
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(4);
      const n = readSync(fd, buf, 0, 4, 60);
      const pid = n === 4 ? buf.readInt32BE(0) : 0;
      return pid > 0 ? pid : undefined;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}
