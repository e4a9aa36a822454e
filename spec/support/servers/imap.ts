import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import hoodiecrow from 'hoodiecrow-imap';
import { ImapFlow } from 'imapflow';

/**
 * The e-mail specs' IMAP server: with IMAP_SPEC_ADDRESS (and IMAP_SPEC_DIR) a dovecot (dovecot.sh);
 * without, an in-process hoodiecrow-imap (https://github.com/andris9/hoodiecrow#readme).
 */
export const IMAP_USER = 'hookrelay';
export const IMAP_PASSWORD = 'secret';

export interface ImapServer {
  host: string;
  port: number;
  /** Drops every connection of the spec user; the server stays up. */
  kick(): void;
  /** Gives INBOX another UIDVALIDITY, as a server that renumbers a mailbox does (RFC 3501 §2.3.1.1). */
  renumber(uidValidity: number): void;
  stop(): Promise<void>;
}

let started: Promise<ImapServer> | undefined;

/** The IMAP server of this run, started on first use. */
export function imapServer(): Promise<ImapServer> {
  const given = process.env.IMAP_SPEC_ADDRESS;
  if (given) {
    const [host, port] = given.split(':');
    return (started ??= Promise.resolve(dovecot(host!, Number(port), process.env.IMAP_SPEC_DIR)));
  }
  return (started ??= startHoodiecrow(true));
}

/** A second server whose capabilities leave IDLE out, for the watcher's polling fallback; `stop` ends it. */
export function startImapServerWithoutIdle(): Promise<ImapServer> {
  return process.env.IMAP_SPEC_ADDRESS ? Promise.resolve(startDovecot({ DOVECOT_SPEC_NO_IDLE: '1' })) : startHoodiecrow(false);
}

/** A client of the spec server, for delivering mail (APPEND) and looking around. */
export async function imapClient(s?: ImapServer): Promise<ImapFlow> {
  s ??= await imapServer();
  const c = new ImapFlow({ host: s.host, port: s.port, secure: false, auth: { user: IMAP_USER, pass: IMAP_PASSWORD }, logger: false });
  c.on('error', () => {});
  await c.connect();
  return c;
}

/** Delivers one raw mail to `mailbox` with IMAP APPEND; resolves with its UID. */
export async function deliver(raw: string | Buffer, mailbox = 'INBOX', server?: ImapServer): Promise<number> {
  const c = await imapClient(server);
  try {
    const r = await c.append(mailbox, raw);
    return (r as { uid: number }).uid;
  } finally {
    await c.logout();
  }
}

/** One number of `mailbox`'s IMAP STATUS (UIDVALIDITY, UIDNEXT). */
export async function mailboxStatus(item: 'uidValidity' | 'uidNext', mailbox = 'INBOX', server?: ImapServer): Promise<number> {
  const c = await imapClient(server);
  try {
    const status = await c.status(mailbox, { [item]: true });
    if (!status) throw new Error(`no STATUS for ${mailbox}`);
    return Number(status[item]);
  } finally {
    await c.logout();
  }
}

export const uidValidity = (mailbox = 'INBOX') => mailboxStatus('uidValidity', mailbox);

/** Empties every mailbox of the spec user (each spec starts from an empty account). */
export async function emptyAccount(): Promise<void> {
  const c = await imapClient();
  try {
    for (const box of await c.list()) {
      if (box.flags.has('\\Noselect')) continue;
      const { exists } = await c.mailboxOpen(box.path);
      if (exists > 0) await c.messageDelete('1:*');
    }
  } finally {
    await c.logout();
  }
}

/** Folders with the special uses dovecot.sh gives the account (RFC 6154). */
const SPECIAL = { Sent: '\\Sent', Drafts: '\\Drafts', Junk: '\\Junk', Trash: '\\Trash' };

async function startHoodiecrow(idle: boolean): Promise<ImapServer> {
  const folders = Object.fromEntries(Object.entries(SPECIAL).map(([name, use]) => [name, { 'special-use': use }]));
  const imap = hoodiecrow({
    plugins: [...(idle ? ['IDLE'] : []), 'SPECIAL-USE', 'UIDPLUS', 'ENABLE', 'ID', 'NAMESPACE', 'UNSELECT'],
    users: { [IMAP_USER]: { password: IMAP_PASSWORD } },
    storage: { INBOX: {}, '': { separator: '/', folders } },
  });
  const sockets = new Set<Socket>();
  imap.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.unref();
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => imap.listen(0, '127.0.0.1', resolve));
  imap.server.unref();
  const kick = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    host: '127.0.0.1',
    port: (imap.server.address() as { port: number }).port,
    kick,
    renumber: (v) => void (imap.getMailbox('INBOX')!.uidvalidity = v),
    stop: () => {
      kick();
      return new Promise((resolve) => imap.close(() => resolve()));
    },
  };
}

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dovecot.sh');

/** The dovecot at host:port; kick and renumber use `doveadm` with the config in `dir`. */
function dovecot(host: string, port: number, dir: string | undefined): ImapServer {
  const doveadm = (...args: string[]) => {
    if (!dir) throw new Error('IMAP_SPEC_DIR is not set: give the dovecot folder of IMAP_SPEC_ADDRESS (dovecot.sh start DIR), for doveadm');
    execFileSync('doveadm', ['-c', path.join(dir, 'dovecot.conf'), ...args], { env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` } });
  };
  return {
    host,
    port,
    kick: () => doveadm('kick', IMAP_USER),
    renumber: (v) => doveadm('mailbox', 'update', '--uid-validity', String(v), '-u', IMAP_USER, 'INBOX'),
    stop: async () => {},
  };
}

/** Starts a dovecot in a new folder (dovecot.sh) with `env` added; `stop` ends it and removes the folder. */
function startDovecot(env: Record<string, string>): ImapServer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-dovecot-'));
  let out: string;
  try {
    out = execFileSync('bash', [SCRIPT, 'start', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  } catch (e) {
    const err = (e as { stderr?: string }).stderr ?? String(e);
    throw new Error(`could not start a second dovecot (IMAP_SPEC_ADDRESS names one, so dovecot is expected here): ${err.trim()}`);
  }
  const [host, port] = out.trim().split('=')[1]!.split(':');
  return {
    ...dovecot(host!, Number(port), dir),
    stop: async () => {
      execFileSync('bash', [SCRIPT, 'stop', dir], { stdio: 'ignore' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
