import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (specs start the real bin from here). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'src/bin.mjs');

export function tmpDir(prefix = 'hookrelay-spec-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The specs' one polling loop: resolves with the first value of `fn` other than `undefined` or
 * `false`; past `timeoutMs`, fails naming `what` (a function is asked only then); a throw ends it.
 */
export async function until<T>(
  what: string | (() => string),
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await sleep(everyMs);
  }
}

/** The admin token spec gateways read with, unless a config names its own or sets `server.adminToken: null`. */
export const ADMIN_TOKEN = 'spec-admin-token-0123456789abcdef';

/** `config` with the spec admin token when its server names none (`adminToken: null` opts out). */
export function withAdminToken<T extends Record<string, any>>(config: T): T {
  const server = config.server ?? {};
  if ('adminToken' in server || 'adminTokens' in server) return config;
  return { ...config, server: { ...server, adminToken: ADMIN_TOKEN } };
}

export interface Gateway {
  proc: ChildProcess;
  base: string;
  hooks: string;
  token: string;
  /** The admin token it reads with: config.server.adminToken (the first of adminTokens). */
  adminToken: string;
  configFile: string;
  output(): string;
  /** Resolves with the output once it matches: log lines are flushed every 100 ms, not at once. */
  logged(pattern: string | RegExp): Promise<string>;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

/**
 * Starts `hookrelay serve` as a user would (the real bin, a real config file, a real store)
 * and resolves once /healthz answers.
 */
export async function startGateway(given: Record<string, any>, opts: { dir?: string; env?: Record<string, string>; cpu?: string; file?: string } = {}): Promise<Gateway> {
  const config = withAdminToken(given);
  const dir = opts.dir ?? tmpDir();
  // `file`: another name, e.g. hookrelay.yaml (JSON text is YAML too) for what only YAML can spell.
  const configFile = path.join(dir, opts.file ?? 'hookrelay.json');
  fs.writeFileSync(configFile, JSON.stringify(config, null, 2));
  const args = ['serve', '--config', configFile];
  const [cmd, argv] = opts.cpu ? ['taskset', ['-c', opts.cpu, BIN, ...args]] : [BIN, args];
  const proc = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  let log = '';
  proc.stdout!.on('data', (d) => { log += d; });
  proc.stderr!.on('data', (d) => { log += d; });
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${config.server.port}`;
  await until(() => `hookrelay to become healthy:\n${log.slice(-3000)}`, async () => {
    if (proc.exitCode !== null) throw new Error(`hookrelay exited ${proc.exitCode}:\n${log.slice(-3000)}`);
    return fetch(`${base}/healthz`).then((r) => r.status === 200, () => false);
  }, 20000).catch((err) => {
    proc.kill('SIGKILL');
    throw err;
  });
  return {
    proc,
    base,
    hooks: `${base}${config.hooks?.path ?? '/hooks'}`,
    token: config.hooks?.token,
    adminToken: config.server?.adminToken ?? config.server?.adminTokens?.[0] ?? generatedAdminToken(dir, config.dataDir),
    configFile,
    output: () => log,
    logged: (pattern) => until(() => `a log line matching ${pattern}:\n${log.slice(-3000)}`,
      () => (typeof pattern === 'string' ? log.includes(pattern) : pattern.test(log)) && log, 10_000),
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** The admin token `serve` generated into `{dataDir}/admin-token` (dataDir relative to the config's folder). */
function generatedAdminToken(dir: string, dataDir = './.hookrelay'): string | undefined {
  try {
    return fs.readFileSync(path.resolve(dir, dataDir, 'admin-token'), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** A run as `GET {hooks}/runs/ID` shows it, read with the specs' admin token. */
export async function runOf(g: Pick<Gateway, 'hooks'>, runId: string): Promise<any> {
  return (await call(`${g.hooks}/runs/${runId}`, { token: ADMIN_TOKEN })).data.run;
}

/** Polls a run until `ok(run)` holds and resolves with it; on time-out says `what` and the run last seen. */
export async function waitRun(g: Pick<Gateway, 'hooks'>, runId: string, ok: (run: any) => boolean, what: string): Promise<any> {
  let run: any;
  return until(() => `${what}: ${JSON.stringify(run)}`, async () => {
    run = await runOf(g, runId);
    return ok(run) ? run : undefined;
  }, 20_000);
}

/** POST/GET helper: resolves with status, headers and the parsed JSON body (or null). */
export async function call(url: string, init: { method?: string; token?: string | null; json?: unknown; raw?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | undefined;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  if (init.raw !== undefined) body = init.raw;
  const r = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await r.text();
  let data: any = null;
  try { data = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, headers: r.headers, text, data };
}
