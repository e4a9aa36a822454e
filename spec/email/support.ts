import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFakeModel, type FakeModel } from '../support/fake-model.js';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, sleep, startGateway, tmpDir, until, type Gateway } from '../support/gateway.js';
import { IMAP_PASSWORD, IMAP_USER, imapServer } from '../support/servers/imap.js';

/** The e-mail specs' setting: a real gateway (the bin), the fake model, a real IMAP server, the real watcher. */
export const TOKEN = 'email-spec-token';

export interface Setup {
  dir: string;
  port: number;
  config: Record<string, any>;
  model: FakeModel;
  gateway: Gateway;
}

/** A gateway with the email preset and `hooks.email` pointing at the spec IMAP server. */
export async function setUp(email: Record<string, unknown> = {}): Promise<Setup> {
  const s = await imapServer();
  const dir = tmpDir('email-spec-');
  const port = await freePort();
  const model = await startFakeModel();
  const config = {
    server: { host: '127.0.0.1', port },
    dataDir: path.join(dir, 'data'),
    hooks: {
      token: TOKEN,
      presets: ['email'],
      email: { imap: { host: s.host, port: s.port, tls: 'none', user: IMAP_USER, passwordEnv: 'IMAP_SPEC_PASSWORD' }, pollSeconds: 5, ...email },
    },
    agent: { baseUrl: model.baseUrl, model: 'fake' },
    heartbeat: { everySeconds: 3600 },
  };
  const gateway = await startGateway(config, { dir });
  return { dir, port, config, model, gateway };
}

export interface Watcher {
  proc: ChildProcess;
  output(): string;
  /** Resolves once the output (JSON log lines) has `n` lines whose msg matches `re`. */
  waitFor(re: RegExp, n?: number, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

/** `hookrelay email run` as a user starts it. */
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
  return {
    proc,
    output: () => log,
    exited,
    async waitFor(re, n = 1, timeoutMs = 15000) {
      await until(() => `the watcher to log ${re} ${n}×:\n${log.slice(-3000)}`, () => {
        if (log.split('\n').filter((l) => re.test(l)).length >= n) return true;
        if (proc.exitCode !== null) throw new Error(`the watcher exited ${proc.exitCode} waiting for ${re}:\n${log.slice(-3000)}`);
        return false;
      }, timeoutMs, 25);
    },
  };
}

/**
 * Starts the watcher and resolves once it is watching (its first-run line): the place to start
 * from is taken, so mail delivered from now on is new.
 */
export async function startWatching(configFile: string, args: string[] = []): Promise<Watcher> {
  const w = startWatcher(configFile, args);
  await w.waitFor(/"msg":"watching"/);
  return w;
}

/** After each e-mail run spec: the watcher (if any), the gateway and the fake model end. */
export async function endRun(s: Setup | undefined, w: Watcher | undefined): Promise<void> {
  if (w) await stopWatcher(w, 'SIGKILL');
  await s?.gateway.kill();
  await s?.model.close();
}

export async function stopWatcher(w: Watcher, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill(signal);
  return w.exited;
}

interface Run { runId: string; sessionKey: string; name?: string; status: string }

/** The gateway's runs, oldest first. */
export async function runs(gw: Gateway): Promise<Run[]> {
  const r = await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN });
  return (r.data.runs as Run[]).reverse();
}

/** Waits until the gateway has `n` runs, then a little longer to see that no more come. */
export async function waitForRuns(gw: Gateway, n: number, timeoutMs = 15000): Promise<Run[]> {
  let list: Run[] = [];
  await until(() => `${n} runs, have ${list.length}: ${JSON.stringify(list.map((r) => r.sessionKey))}`, async () => {
    list = await runs(gw);
    return list.length >= n;
  }, timeoutMs);
  await sleep(400);
  return runs(gw);
}

/** A raw RFC 5322 mail with CRLF line ends. */
export function mail(headers: Record<string, string>, body: string): string {
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n');
  return `${head}\r\n\r\n${body.replace(/\r?\n/g, '\r\n')}\r\n`;
}

export function writeConfig(s: Setup, change: (c: Record<string, any>) => void): void {
  change(s.config);
  fs.writeFileSync(s.gateway.configFile, JSON.stringify(s.config, null, 2));
}
