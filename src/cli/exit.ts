import { ConfigError } from '../config/errors.js';
import { StoreError } from '../store/store.js';

/** Config problems: one per line with its path, exit 1; a store that cannot be opened: its message, exit 1. Anything else, thrown or rejected, is a bug: rethrow. */
export function orExit<T>(fn: () => T): T {
  try {
    const out = fn();
    return (out instanceof Promise ? out.catch(reportConfig) : out) as T;
  } catch (e) {
    return reportConfig(e);
  }
}

/** Prints a config problem (each with its YAML path) or a store's message and exits 1; rethrows anything else. */
export function reportConfig(e: unknown): never {
  if (e instanceof ConfigError) {
    for (const p of e.problems) process.stderr.write(`${p.path}: ${p.message}\n`);
    process.exit(1);
  }
  // A store that cannot be read (none yet, another schema version): its message says what to do.
  if (e instanceof StoreError) fail(e.message);
  throw e;
}

/** `hookrelay: <message>` on stderr, exit 1. */
export function fail(message: string): never {
  process.stderr.write(`hookrelay: ${message}\n`);
  process.exit(1);
}
