import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';

/**
 * The real IMAP server of the e-mail specs: a throwaway dovecot (dovecot.sh). CI (.ci/run)
 * starts one for the whole run and passes it in IMAP_SPEC_ADDRESS / IMAP_SPEC_DIR; without
 * them (`npm test` on a developer's machine) the first spec that asks starts one and the
 * run's end stops it.
 */
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dovecot.sh');
export const IMAP_USER = 'hookrelay';
export const IMAP_PASSWORD = 'secret';

export interface ImapServer {
  host: string;
  port: number;
  /** dovecot's folder (its config is dovecot.conf there), for doveadm. */
  dir: string;
}

let started: ImapServer | undefined;

/** The IMAP server of this run, started on first use. */
export function imapServer(): ImapServer {
  if (started) return started;
  const given = process.env.IMAP_SPEC_ADDRESS;
  if (given && process.env.IMAP_SPEC_DIR) {
    const [host, port] = given.split(':');
    return (started = { host: host!, port: Number(port), dir: process.env.IMAP_SPEC_DIR });
  }
  const server = startDovecot('hookrelay-dovecot-');
  process.once('exit', () => {
    try {
      server.stop();
    } catch { /* best effort at exit */ }
  });
  return (started = server);
}

/**
 * A second throwaway dovecot whose capabilities leave IDLE out (dovecot.sh with
 * DOVECOT_SPEC_NO_IDLE=1), for the watcher's polling fallback; `stop` ends it.
 */
export function startImapServerWithoutIdle(): ImapServer & { stop(): void } {
  return startDovecot('hookrelay-dovecot-noidle-', { DOVECOT_SPEC_NO_IDLE: '1' });
}

/** Starts a dovecot in a new folder (dovecot.sh) with `env` added; `stop` ends it and removes the folder. */
function startDovecot(prefix: string, env: Record<string, string> = {}): ImapServer & { stop(): void } {
  // Not under TMPDIR: the run's folder goes before the process exits, and dovecot's config
  // must still be there for the stop at exit.
  const dir = fs.mkdtempSync(path.join(process.platform === 'win32' ? os.tmpdir() : '/tmp', prefix));
  let out: string;
  try {
    out = execFileSync('bash', [SCRIPT, 'start', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  } catch (e) {
    const err = (e as { stderr?: string }).stderr ?? String(e);
    throw new Error(`the e-mail specs need a real IMAP server and could not start one: ${err.trim()}\n(install it with: sudo apt-get install -y dovecot-imapd)`);
  }
  const [host, port] = out.trim().split('=')[1]!.split(':');
  const stop = () => {
    execFileSync('bash', [SCRIPT, 'stop', dir], { stdio: 'ignore' });
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { host: host!, port: Number(port), dir, stop };
}

/** `doveadm` against the spec server (e.g. `kick hookrelay`). */
export function doveadm(...args: string[]): string {
  const s = imapServer();
  return execFileSync('doveadm', ['-c', path.join(s.dir, 'dovecot.conf'), ...args], { encoding: 'utf8', env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` } });
}

/** A client of the spec server, for delivering mail (APPEND) and looking around. */
export async function imapClient(s: ImapServer = imapServer()): Promise<ImapFlow> {
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

/** Empties every mailbox of the spec user (each spec starts from an empty account). */
export async function emptyAccount(): Promise<void> {
  doveadm('expunge', '-u', IMAP_USER, 'mailbox', '*', 'all');
}
