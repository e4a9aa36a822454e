import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Written atomically after a 2xx: a crash reposts at most the mail in flight, which its idempotency key replays. */
export interface MailboxProgress {
  /** Text: it is a 32-bit unsigned number. */
  uidValidity: string;
  lastUid: number;
  /** INTERNALDATE (seconds) of the newest mail handled and the ids with it: where to resume after a UIDVALIDITY change. */
  lastDate?: number;
  lastDateIds?: string[];
}

export type Progress = ReturnType<typeof openProgress>;

export function openProgress(dataDir: string, key: string) {
  const file = join(dataDir, 'email-progress.json');
  let all = readJsonFile<MailboxProgress>(file, 'move it away to start again from now');
  return {
    get: (): MailboxProgress | undefined => all[key],
    set(next: MailboxProgress): void {
      all = { ...all, [key]: next };
      writeAtomic(file, `${JSON.stringify(all, null, 2)}\n`);
    },
  };
}

/** The file's entries by mailbox, none when it does not exist; `advice` says what to do when it cannot be read. */
export function readJsonFile<T>(file: string, advice: string): Record<string, T> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, T>;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`${file} cannot be read (${(e as Error).message}); ${advice}`);
  }
}

/** Temp, fsync, rename, fsync of the folder: a crash leaves the old or the new content. */
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
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
