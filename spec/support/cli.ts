import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './gateway.js';

export interface CliResult { code: number; stdout: string; stderr: string }

/** Thrown by the stand-in for process.exit: unwinds the command as exiting would end it. */
class Exit {
  constructor(readonly code: number) {}
}

/** Writes a config file into `dir` (an object as JSON, a string as it is) and returns its path. */
export function writeConfig(dir: string, config: unknown, name = 'hookrelay.json'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  return file;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * `hookrelay ARGS` by the CLI's `main` in this process, one call at a time (each borrows its streams,
 * environment and working directory; `env` laid over it, undefined: unset). Commands that run until stopped spawn the bin. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT): Promise<CliResult> {
  const result = queue.then(() => once(args, env, cwd));
  queue = result.catch(() => undefined);
  return result;
}

async function once(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<CliResult> {
  const out = { stdout: '', stderr: '' };
  const saved = { stdout: process.stdout.write, stderr: process.stderr.write, exit: process.exit, exitCode: process.exitCode, env: { ...process.env }, cwd: process.cwd() };
  const capture = (key: keyof typeof out) => ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    out[key] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = capture('stdout');
  process.stderr.write = capture('stderr');
  process.exit = ((code?: number) => { throw new Exit(Number(code ?? process.exitCode ?? 0)); }) as typeof process.exit;
  process.exitCode = undefined;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  process.chdir(cwd);
  try {
    // Imported as the bin imports it: the commands' own lazy imports then share its module instances.
    const { main } = await import('../../src/cli/index.js');
    await main(['node', 'hookrelay', ...args]);
    return { code: Number(process.exitCode ?? 0), ...out };
  } catch (e) {
    if (e instanceof Exit) return { code: e.code, ...out };
    // The bin leaves an error it does not handle to Node, which prints it and exits 1.
    return { code: 1, stdout: out.stdout, stderr: `${out.stderr}${e instanceof Error ? e.stack : String(e)}\n` };
  } finally {
    process.stdout.write = saved.stdout;
    process.stderr.write = saved.stderr;
    process.exit = saved.exit;
    process.exitCode = saved.exitCode;
    for (const name of Object.keys(process.env)) if (!(name in saved.env)) delete process.env[name];
    Object.assign(process.env, saved.env);
    process.chdir(saved.cwd);
  }
}
