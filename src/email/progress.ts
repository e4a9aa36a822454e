import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * How far `email run` has got in a mailbox, kept in `{dataDir}/email-progress.json` (not in
 * the gateway's store, which `serve` holds). Written only after the hook answered 2xx for a
 * mail, atomically (temp file, fsync, rename, fsync of the folder), so that a crash at any
 * point leaves either the old or the new state: a mail is never skipped, and at most the one
 * in flight is posted again — which the listener's idempotency key answers with a replay.
 */
export interface MailboxProgress {
  /** The mailbox's UIDVALIDITY the UIDs below belong to (text: it is a 32-bit unsigned number). */
  uidValidity: string;
  /** Every mail up to this UID has been posted (or was there before the first run). */
  lastUid: number;
  /**
   * INTERNALDATE (ms) of the newest mail handled, and the ids of the mails handled with that
   * date: after a UIDVALIDITY change the UIDs mean nothing, and these say where to resume.
   */
  lastDate?: number;
  lastDateIds?: string[];
}

type ProgressFile = Record<string, MailboxProgress>;

export interface Progress {
  get(): MailboxProgress | undefined;
  set(next: MailboxProgress): void;
}

/** The progress of mailbox `key` (account and mailbox) in `dataDir`. */
export function openProgress(dataDir: string, key: string): Progress {
  const file = join(dataDir, 'email-progress.json');
  const read = (): ProgressFile => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as ProgressFile;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new Error(`${file} cannot be read (${(e as Error).message}); move it away to start again from now`);
    }
  };
  let all = read();
  return {
    get: () => all[key],
    set(next) {
      all = { ...all, [key]: next };
      writeAtomic(file, `${JSON.stringify(all, null, 2)}\n`);
    },
  };
}

/** Writes `text` to `file` so that a crash leaves the old or the new content (temp, fsync, rename, fsync). */
export function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  // The rename itself is durable only once the folder's entry is on disk.
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
