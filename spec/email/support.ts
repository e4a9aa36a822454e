import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ImapFlow } from 'imapflow';
import { configFromObject } from '../../src/config/load.js';
import { runEmail } from '../../src/email/run.js';
import { createLogger } from '../../src/log.js';
import { start } from '../../src/serve.js';
import { startFakeModel, type FakeModel } from '../support/fake-model.js';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, tmpDir, until, withAdminToken } from '../support/gateway.js';
import { IMAP_PASSWORD, IMAP_USER, imapClient, imapServer, mailboxStatus, type ImapServer } from '../support/servers/imap.js';
import { silentLogger } from '../support/silent-logger.js';

/**
 * The e-mail specs' setting: the real watcher (the bin, `hookrelay email run`), a real IMAP
 * server, the fake model, and the real app in this process as the listener it posts to: what is
 * under test is the watcher, and the listener's own process is tested by the HTTP specs.
 */
export const TOKEN = 'email-spec-token';

/** The listener the watcher posts to, started from the config file the watcher reads. */
export interface Listener {
  hooks: string;
  configFile: string;
  stop(): Promise<void>;
}

export interface Setup {
  dir: string;
  port: number;
  config: Record<string, any>;
  model: FakeModel;
  gateway: Listener;
}

/** Starts the app of `config` on its port, in this process, after writing `config` to `{dir}/hookrelay.json`. */
export async function startListener(config: Record<string, any>, dir: string): Promise<Listener> {
  const configFile = path.join(dir, 'hookrelay.json');
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2));
  const running = await start(configFromObject(config, configFile, {}), silentLogger);
  return { hooks: `${running.listener.url}${config.hooks.path ?? '/hooks'}`, configFile, stop: () => running.stop() };
}

/** A gateway with the email preset and `hooks.email` pointing at the spec IMAP server (or `imap`, e.g. a proxy). */
export async function setUp(email: Record<string, unknown> = {}, imap: Pick<ImapServer, 'host' | 'port'> | undefined = undefined): Promise<Setup> {
  const s = imap ?? (await imapServer());
  const dir = tmpDir('email-spec-');
  const port = await freePort();
  const model = await startFakeModel();
  const config = withAdminToken({
    server: { host: '127.0.0.1', port },
    dataDir: path.join(dir, 'data'),
    hooks: {
      token: TOKEN,
      presets: ['email'],
      email: { imap: { host: s.host, port: s.port, tls: 'none', user: IMAP_USER, passwordEnv: 'IMAP_SPEC_PASSWORD' }, pollSeconds: 5, ...email },
    },
    agent: { baseUrl: model.baseUrl, model: 'fake' },
    heartbeat: { everySeconds: 3600 },
  });
  const gateway = await startListener(config, dir);
  return { dir, port, config, model, gateway };
}

export interface Watcher {
  output(): string;
  /** Resolves once the output (JSON log lines) has `n` lines whose msg matches `re`. */
  waitFor(re: RegExp, n?: number, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code (null in this process, or when killed by a signal). */
  exited: Promise<number | null>;
  /** Sends `signal` (in this process: aborts the watch, as SIGTERM does) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A watcher over its log and its end: `ended` says why it ended when it ended early. */
function watcher(log: () => string, ended: () => string | undefined, exited: Promise<number | null>, stop: Watcher['stop']): Watcher {
  return {
    output: log,
    exited,
    stop,
    async waitFor(re, n = 1, timeoutMs = 15000) {
      await until(() => `the watcher to log ${re} ${n}×:\n${log().slice(-3000)}`, () => {
        if (log().split('\n').filter((l) => re.test(l)).length >= n) return true;
        const why = ended();
        if (why) throw new Error(`the watcher ${why} waiting for ${re}:\n${log().slice(-3000)}`);
        return false;
      }, timeoutMs, 25);
    },
  };
}

/** `hookrelay email run` as a user starts it: for what the process does (exit codes, signals, its CLI options). */
export function startWatcher(configFile: string, args: string[] = [], password = IMAP_PASSWORD): Watcher {
  const proc = spawn(BIN, ['email', 'run', '--config', configFile, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, IMAP_SPEC_PASSWORD: password },
  });
  let log = '';
  proc.stdout!.on('data', (d) => { log += d; });
  proc.stderr!.on('data', (d) => { log += d; });
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return watcher(() => log, () => (proc.exitCode !== null ? `exited ${proc.exitCode}` : undefined), exited, (signal = 'SIGTERM') => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    return exited;
  });
}

/** The command's watch (email/run.ts) in this process, logging as `email run` does: for what the watcher does with mail. */
export function startWatcherHere(s: Setup): Watcher {
  let log = '';
  const logger = createLogger('info', { write: (line: string) => { log += line; } }).child({ component: 'email' });
  const abort = new AbortController();
  const loaded = configFromObject(s.config, s.gateway.configFile, {});
  let failed: string | undefined;
  const exited = runEmail(loaded, { IMAP_SPEC_PASSWORD: IMAP_PASSWORD }, logger, abort.signal).then(() => null, (e: Error) => {
    failed = `failed (${e.message})`;
    return null;
  });
  return watcher(() => log, () => failed, exited, () => {
    abort.abort();
    return exited;
  });
}

/**
 * Starts the watcher (by default in this process; `bin`: the command) and resolves once it is
 * watching (its first-run line): the place to start from is taken, so mail delivered from now on is new.
 */
export async function startWatching(s: Setup, o: { bin?: boolean; args?: string[] } = {}): Promise<Watcher> {
  const w = o.bin ? startWatcher(s.gateway.configFile, o.args) : startWatcherHere(s);
  await w.waitFor(/"msg":"watching"/);
  return w;
}

/** After each e-mail run spec: the watcher (if any), the gateway, the fake model and the delivering connection end. */
export async function endRun(s: Setup | undefined, w: Watcher | undefined): Promise<void> {
  if (w) await w.stop('SIGKILL');
  await s?.gateway.stop();
  await s?.model.close();
  for (const c of delivering.values()) await c.then((c) => c.logout()).catch(() => {});
  delivering.clear();
}

export function stopWatcher(w: Watcher, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return w.stop(signal);
}

/** One delivering connection per server, opened again when the server dropped it. */
const delivering = new Map<string, Promise<ImapFlow>>();

/** Delivers one raw mail to `mailbox` with IMAP APPEND; resolves with its UID. */
export async function deliver(raw: string | Buffer, mailbox = 'INBOX', server?: ImapServer): Promise<number> {
  const to = server ?? (await imapServer());
  const key = `${to.host}:${to.port}`;
  let c = await (delivering.get(key) ?? Promise.resolve(undefined));
  if (!c?.usable) {
    const opened = imapClient(to);
    delivering.set(key, opened);
    c = await opened;
  }
  try {
    return ((await c.append(mailbox, raw)) as { uid: number }).uid;
  } catch (e) {
    // A kick (ImapServer.kick) drops this connection too: deliver on a new one.
    if (c.usable) throw e;
    return deliver(raw, mailbox, server);
  }
}

interface Run { runId: string; sessionKey: string; name?: string; status: string }

/** The gateway's runs, oldest first. */
export async function runs(gw: Pick<Listener, 'hooks'>): Promise<Run[]> {
  const r = await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN });
  return (r.data.runs as Run[]).reverse();
}

/**
 * Waits until the gateway has `n` runs and the watcher `w` has nothing left to post: its
 * progress is at the mailbox's newest UID and its last pass over the mailbox has ended (a
 * "caught up" line after the last "posted"). No more can come then without new mail, so the
 * runs it resolves with are all there will be.
 */
export async function waitForRuns(s: Setup, w: Watcher, n: number, timeoutMs = 15000): Promise<Run[]> {
  let list: Run[] = [];
  await until(() => `${n} runs, have ${list.length}: ${JSON.stringify(list.map((r) => r.sessionKey))}`, async () => {
    list = await runs(s.gateway);
    return list.length >= n;
  }, timeoutMs);
  const email = s.config.hooks.email;
  const box = `${email.imap.user}@${email.imap.host}:${email.imap.port}/${email.mailbox ?? 'INBOX'}`;
  const newest = (await mailboxStatus('uidNext', email.mailbox ?? 'INBOX', email.imap as ImapServer)) - 1; // the newest mail has the UID below UIDNEXT
  await until(() => `the watcher to post every mail up to UID ${newest}:\n${w.output().slice(-3000)}`, () => {
    const passes = w.output().split('\n').filter((l) => /"msg":"(posted|caught up \d+|the hook refused[^"]*)"/.test(l));
    return /"msg":"caught up/.test(passes[passes.length - 1] ?? '') && (progressOf(s, box) ?? 0) >= newest;
  }, timeoutMs, 25);
  return runs(s.gateway);
}

/** The last UID the watcher handled in `box`, from the progress it keeps in dataDir. */
function progressOf(s: Setup, box: string): number | undefined {
  try {
    return (JSON.parse(fs.readFileSync(path.join(s.config.dataDir, 'email-progress.json'), 'utf8')) as Record<string, { lastUid: number }>)[box]?.lastUid;
  } catch {
    return undefined;
  }
}

/** A raw RFC 5322 mail with CRLF line ends. */
export function mail(headers: Record<string, string>, body: string): string {
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n');
  return `${head}\r\n\r\n${body.replace(/\r?\n/g, '\r\n')}\r\n`;
}

export interface ImapRelay {
  host: string;
  port: number;
  /** How many `command`s (e.g. NOOP, UID FETCH) were sent on connections that opened a mailbox read-only: the watcher's. */
  sent(command: string): number;
  stop(): Promise<void>;
}

/** A TCP relay to `server` that counts the commands the watcher sends through it (RFC 3501 §2.2.1: a tag, then the command). */
export async function imapRelay(server: Pick<ImapServer, 'host' | 'port'>): Promise<ImapRelay> {
  const commands: string[] = [];
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    const upstream = net.connect(server.port, server.host);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(a);
      a.on('error', () => {});
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
    }
    let pending = '';
    let watching = false;
    client.on('data', (d: Buffer) => {
      const lines = (pending + d.toString('latin1')).split('\r\n');
      pending = lines.pop()!;
      for (const l of lines) {
        const command = l.replace(/^\S+ /, '').toUpperCase();
        watching ||= command.startsWith('EXAMINE ');
        if (watching) commands.push(command);
      }
    });
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port: (relay.address() as net.AddressInfo).port,
    sent: (command) => commands.filter((c) => c === command || c.startsWith(`${command} `)).length,
    stop: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => relay.close(() => resolve()));
    },
  };
}
