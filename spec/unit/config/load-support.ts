import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, type ConfigProblem } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';

export function write(text: string, name = 'hookrelay.yaml', dir = mkdtempSync(join(tmpdir(), 'hookrelay-config-'))): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

export function problemsOf(fn: () => unknown): ConfigProblem[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

/** The problems of a config given as an object (as if it had been parsed from a file). */
export const problemsFor = (raw: unknown, env = {}) => problemsOf(() => configFromObject(raw, '/etc/hookrelay/hookrelay.yaml', env));
export const paths = (ps: ConfigProblem[]) => ps.map((p) => p.path);
export const agentMapping = { match: { path: 'x' }, messageTemplate: 'hi' };
