import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from './store.js';

/** The lock file, beside `hookrelay.db` in the data directory. */
const LOCK_FILE = 'hookrelay.lock';

/** A held data-directory lock (see {@link lockDataDir}). */
export interface DataDirLock {
  /** Gives the lock up; idempotent. */
  release(): void;
}

/**
 * Lock files (`dev:ino`) this process holds. A POSIX record lock belongs to the process and
 * is dropped when ANY descriptor of the file in that process is closed
 * (https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_):
 * reading a holder's pid with `fs` from inside the holding process would release its lock.
 * SQLite's own connections are safe (it defers such closes); our `fs` read is not, so it asks here first.
 */
const held = new Set<string>();

/**
 * Takes the data directory for this process, for as long as the process lives (or until
 * `release()`): one server per store, so that a second `hookrelay serve` on the same folder
 * cannot run crash recovery on the first one's live runs.
 *
 * Node has no flock(), so the lock is SQLite's: `{dataDir}/hookrelay.lock` is a tiny database
 * held in exclusive locking mode (https://www.sqlite.org/pragma.html#pragma_locking_mode).
 * After its first write — storing our pid as `user_version` — the connection keeps its
 * EXCLUSIVE lock until closed. The lock is an fcntl() record lock, so the kernel drops it
 * when the process dies however it dies: a SIGKILLed server leaves no stale lock and a
 * restart takes it at once. A pidfile would need a liveness check that pid reuse defeats.
 * SQLite tracks locks per inode inside a process too, so two stores opened in one process
 * on one folder conflict as well. (Network file systems without working fcntl() locks —
 * which SQLite warns against for the store itself — cannot enforce it.)
 *
 * Throws {@link StoreError} `locked` naming the holder's pid when another holds it.
 */
export function lockDataDir(dataDir: string): DataDirLock {
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
    release: () => {
      if (released) return;
      released = true;
      held.delete(key);
      db.close();
    },
  };
}

/**
 * The pid stored by the lock's holder: the `user_version` header field, a 4-byte big-endian
 * integer at offset 60 (https://www.sqlite.org/fileformat2.html#user_version_number). Read
 * with `fs`: SQLite cannot open a file another connection holds in exclusive mode.
 * Undefined when unknown (the holder has not written it yet).
 */
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
