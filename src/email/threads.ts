import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { readJsonFile, writeAtomic } from './progress.js';

/**
 * Who took part in which thread (CONTRACT.md §7): only a participant continues a thread's
 * session, as a References header is the sender's choice. Bounded; kept as hashes.
 */
export const MAX_THREADS = 1000;
export const MAX_PARTICIPANTS = 20;

export type Threads = ReturnType<typeof openThreads>;

type ThreadList = [string, string[]][];

export function openThreads(dataDir: string, key: string) {
  const file = join(dataDir, 'email-threads.json');
  let all = readJsonFile<ThreadList>(file, 'move it away to forget the threads (replies then start sessions of their own)');
  const threads = new Map<string, string[]>(Object.prototype.hasOwnProperty.call(all, key) ? all[key] : []);
  return {
    /** The first of `threadIds` that is a known thread with `sender` among its participants. */
    continued(threadIds: string[], sender: string | undefined): string | undefined {
      if (!sender) return undefined;
      const who = hash(sender);
      return threadIds.find((id) => threads.get(hash(id))?.includes(who));
    },
    /** True when `id` names a thread already posted that `sender` took no part in. */
    takenFrom(id: string, sender: string | undefined): boolean {
      const who = threads.get(hash(id));
      return who !== undefined && !(sender !== undefined && who.includes(hash(sender)));
    },
    /** Records `addresses` as participants of `threadId` (the mail was posted) and saves. */
    record(threadId: string, addresses: string[]): void {
      const h = hash(threadId);
      const known = threads.get(h) ?? [];
      const added = [...new Set([...known, ...addresses.map(hash)])].slice(0, MAX_PARTICIPANTS);
      threads.delete(h);
      threads.set(h, added);
      while (threads.size > MAX_THREADS) threads.delete(threads.keys().next().value!);
      all = { ...all, [key]: [...threads] };
      writeAtomic(file, `${JSON.stringify(all)}\n`);
    },
  };
}

/** 96 bits of SHA-256 (addresses come lower-case from message.ts; ids are case-sensitive): collisions need about 2^48 entries, and a file of 1,000 threads stays small. */
function hash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}
