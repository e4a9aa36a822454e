import { createHash } from 'node:crypto';
import { on } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { ImapFlow } from 'imapflow';
import type { HooksConfig } from '../config/types.js';
import { backoffMs } from '../dispatch/retry.js';
import type { Logger } from '../log.js';
import { readMail, SOURCE_MAX_BYTES, type MailLimits } from './message.js';
import { postMail, type HookTarget } from './post.js';
import type { MailboxProgress, Progress } from './progress.js';
import type { Threads } from './threads.js';

/** The IMAP side of `hookrelay email run` (CONTRACT.md §7): one connection, IDLE, mails posted in UID order. */

/** `hooks.email.imap` with its port decided and its password read (`passwordFrom`: where from, for messages). */
export type ImapAccount = NonNullable<HooksConfig['email']>['imap'] & { port: number; pass: string; passwordFrom: string };

export interface WatchOptions {
  account: ImapAccount;
  mailbox: string;
  target: HookTarget;
  progress: Progress;
  /** Who took part in which thread: only they continue its session. */
  threads: Threads;
  limits: MailLimits;
  pollSeconds: number;
  /** First run only: post the last N mails of the mailbox instead of starting from now. */
  backfill: number;
  log: Logger;
  signal: AbortSignal;
}

/** A problem a reconnect cannot fix (a refused login, a skipped folder): `email run` exits 1. */
export class WatchError extends Error {}

/** Special-use folders whose mail is never posted (RFC 6154): the user's own and the junk. */
const SKIPPED_USES = ['\\Sent', '\\Drafts', '\\Junk', '\\Trash'];

/** Watches until `signal` aborts (resolves) or a {@link WatchError} (rejects); a session ends only by throwing. */
export async function watch(o: WatchOptions): Promise<void> {
  const { account, log, signal } = o;
  for (let failures = 0; !signal.aborted; ) {
    const client = new ImapFlow({
      host: account.host,
      port: account.port,
      secure: account.tls === 'implicit',
      doSTARTTLS: account.tls === 'starttls' ? true : account.tls === 'none' ? false : undefined,
      auth: { user: account.user, pass: account.pass },
      logger: false,
      maxIdleTime: o.pollSeconds * 1000,
      // imapflow waits 15 s before IDLE by default; at once, new mail is posted within about a second.
      autoIdleDelay: 200,
      connectionTimeout: 30_000,
    });
    // Without a listener, 'error' would throw; a connection error also arrives as 'close'.
    client.on('error', () => {});
    try {
      await client.connect();
      failures = 0;
      log.info({ host: account.host, port: account.port, mailbox: o.mailbox, idle: client.capabilities.has('IDLE') }, 'connected');
      await session(client, o);
    } catch (e) {
      client.close();
      if (signal.aborted) break;
      if ((e as { authenticationFailed?: boolean }).authenticationFailed) {
        throw new WatchError(`the IMAP server ${account.host}:${account.port} refused the login of ${account.user}: check the user and the password in ${account.passwordFrom} (for Gmail: an app password, with IMAP enabled)`);
      }
      if (e instanceof WatchError) throw e;
      failures++;
      const wait = backoffMs(failures, 1000, 30_000);
      log.warn({ host: account.host, port: account.port }, `IMAP connection lost or refused (${(e as Error).message}); retrying in ${(wait / 1000).toFixed(1)}s`);
      await sleep(wait, undefined, { signal }).catch(() => {});
    }
  }
}

async function session(client: ImapFlow, o: WatchOptions): Promise<void> {
  const boxes = await client.list();
  const wanted = o.mailbox.toUpperCase() === 'INBOX' ? 'INBOX' : o.mailbox;
  const box = boxes.find((b) => (wanted === 'INBOX' ? b.path.toUpperCase() === 'INBOX' : b.path === wanted));
  if (!box) throw new WatchError(`hooks.email.mailbox: there is no mailbox ${JSON.stringify(o.mailbox)}; the account has ${boxes.map((b) => b.path).join(', ')}`);
  const use = [box.specialUse, ...box.flags].find((f) => f && SKIPPED_USES.includes(f));
  if (use) throw new WatchError(`hooks.email.mailbox: ${box.path} is the account's ${use.slice(1)} folder, whose mail is never posted; watch the inbox (or another folder) instead`);

  const opened = await client.mailboxOpen(box.path, { readOnly: true });
  const uidValidity = String(opened.uidValidity);
  await begin(client, o, uidValidity, opened.uidNext);
  o.log.info({ mailbox: box.path, uidValidity, after: o.progress.get()!.lastUid }, 'watching');

  // Queues each 'exists' that comes during a catch-up, so the mail it announces is not missed.
  const news = on(client, 'exists', { signal: o.signal, close: ['close'] });
  // Not raced against 'close': a post in flight finishes and is recorded before the session ends.
  await catchUp(client, o, uidValidity);
  for await (const _ of news) await catchUp(client, o, uidValidity);
  throw new Error('the server closed the connection');
}

/** Another UIDVALIDITY: the place is found again by INTERNALDATE and header fingerprint (CONTRACT.md §7). */
async function begin(client: ImapFlow, o: WatchOptions, uidValidity: string, uidNext: number): Promise<void> {
  const p = o.progress.get();
  if (p && p.uidValidity === uidValidity) return;
  if (!p) {
    let lastUid = uidNext - 1;
    let lastDate = Math.floor(Date.now() / 1000);
    if (o.backfill > 0) {
      const all = (await client.search({ all: true }, { uid: true })) || [];
      const first = all.slice(-o.backfill)[0];
      if (first !== undefined) {
        lastUid = first - 1;
        const m = await client.fetchOne(String(first), { uid: true, internalDate: true }, { uid: true });
        lastDate = (m ? seconds(m.internalDate) : lastDate) - 1;
      }
      o.log.info({ backfill: Math.min(o.backfill, all.length) }, 'first run: posting the last mails of the mailbox once, then new ones');
    } else {
      o.log.info({ uidNext }, 'first run: starting from now (mail already in the mailbox is not posted; --backfill N posts the last N)');
    }
    o.progress.set({ uidValidity, lastUid, lastDate, lastDateIds: [] });
    return;
  }
  const since = p.lastDate ?? 0;
  const seen = new Set(p.lastDateIds ?? []);
  const fresh: number[] = [];
  // SEARCH SINCE is by day (in the server's zone): a day early, then exact by INTERNALDATE.
  const near = (await client.search({ since: new Date((since - 86400) * 1000) }, { uid: true })) || [];
  if (near.length > 0) {
    for await (const m of client.fetch(near.join(','), { uid: true, internalDate: true, headers: true }, { uid: true })) {
      const date = seconds(m.internalDate);
      if (date > since || (date === since && !seen.has(fingerprint(m.headers)))) fresh.push(m.uid);
    }
  }
  fresh.sort((a, b) => a - b);
  const lastUid = fresh.length > 0 ? fresh[0]! - 1 : uidNext - 1;
  o.log.warn({ was: p.uidValidity, now: uidValidity, toPost: fresh.length }, 'the mailbox was renumbered (UIDVALIDITY changed); resuming after the newest mail handled, by date');
  o.progress.set({ ...p, uidValidity, lastUid });
}

async function catchUp(client: ImapFlow, o: WatchOptions, uidValidity: string): Promise<void> {
  let p = o.progress.get()!;
  const found = (await client.search({ uid: `${p.lastUid + 1}:*` }, { uid: true })) || [];
  // `N:*` also matches the highest UID when it is below N (RFC 3501 §6.4.8).
  const uids = found.filter((u) => u > p.lastUid).sort((a, b) => a - b);
  for (const uid of uids) {
    const m = await client.fetchOne(String(uid), { uid: true, source: { maxLength: SOURCE_MAX_BYTES }, size: true, internalDate: true }, { uid: true });
    if (m && m.source) {
      // readMail never throws, so a refused mail is not taken for a lost connection and fetched forever.
      const read = await readMail(m.source, { uidValidity, uid, size: m.size }, o.limits);
      if (read.fields.parseError) o.log.warn({ uid, parseError: read.fields.parseError }, 'the mail could not be parsed whole; posting what could be read');
      const threadId = o.threads.continued(read.threadIds, read.sender);
      let mail = threadId ? { ...read.fields, threadId } : read.fields;
      // A Message-ID is the sender's choice: one copied from a thread its sender took no part in
      // would share that thread's session, so it is keyed by where it sits instead.
      if (!threadId && o.threads.takenFrom(mail.id, read.sender)) mail = { ...mail, id: mail.uid };
      const r = await postMail(o.target, mail, `email:${uidValidity}:${uid}`, uid, o.log, o.signal);
      if (r.outcome === 'refused') o.log.error({ uid, status: r.status, code: r.code }, 'the hook refused the mail for good; skipped');
      else {
        o.threads.record(threadId ?? mail.id, read.addresses);
        o.log.info({ uid, status: r.status, ...(read.threadIds.length > 0 && !threadId ? { threadRefused: true } : {}) }, 'posted');
      }
      p = advance(p, uid, seconds(m.internalDate), fingerprint(headerBlock(m.source)));
    } else {
      p = { ...p, lastUid: uid }; // expunged before we got to it
    }
    o.progress.set(p);
  }
  if (uids.length > 0) o.log.info({ count: uids.length }, `caught up ${uids.length}`);
}

function advance(p: MailboxProgress, uid: number, date: number, id: string): MailboxProgress {
  const last = p.lastDate ?? 0;
  if (date > last) return { ...p, lastUid: uid, lastDate: date, lastDateIds: [id] };
  if (date === last) return { ...p, lastUid: uid, lastDateIds: [...(p.lastDateIds ?? []), id] };
  return { ...p, lastUid: uid };
}

function seconds(date: Date | string | undefined): number {
  return date ? Math.floor(new Date(date).getTime() / 1000) : 0;
}

function headerBlock(source: Buffer): Buffer {
  const end = source.indexOf('\r\n\r\n');
  return end < 0 ? source : source.subarray(0, end + 4); // with the blank line, as BODY[HEADER]
}

/** A mail's identity that survives renumbering, Message-ID or not: a hash of its headers. */
function fingerprint(headers: Buffer | undefined): string {
  return createHash('sha256').update(headers ?? '').digest('base64url').slice(0, 22);
}
