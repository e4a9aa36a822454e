import { pino, type DestinationStream, type Logger } from 'pino';
import { LOG_BUFFER_BYTES, SECRET_HEADERS, SECRET_KEYS } from './config/schema.js';
import { stderrOutput, type LogOutput } from './log-output.js';

export type { Logger };

/** How many objects deep below the logged one a secret is still found. */
const REDACT_DEPTH = 6;
const SECRET_NAMES: ReadonlySet<string> = new Set<string>([...SECRET_KEYS, ...SECRET_HEADERS]);
const CENSOR = '[redacted]';

/** The logged object with every value under a secret name redacted, copying only what changes (pino's `redact` takes fixed paths). */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > REDACT_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const r = redact(value[i], depth + 1);
      if (r !== value[i]) (out ??= value.slice())[i] = r;
    }
    return out ?? value;
  }
  const isError = value instanceof Error;
  if (!isError && !isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    const r = SECRET_NAMES.has(key) ? CENSOR : redact(v, depth + 1);
    // Copied with its prototype: pino's err serializer runs after this formatter.
    if (r !== v) (out ??= isError ? copyError(value as Error) : { ...value })[key] = r;
  }
  return out ?? value;
}

function copyError(err: Error): Record<string, unknown> {
  return Object.create(Object.getPrototypeOf(err), Object.getOwnPropertyDescriptors(err)) as Record<string, unknown>;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The output {@link createLogger} made for a logger (children inherit it through their prototype). */
const OUTPUT = Symbol('hookrelay.logOutput');

/** The process's logger: JSON lines on stderr (stdout is for command output), or to `destination` (specs). */
export function createLogger(level: string = 'info', destination?: DestinationStream, o: { bufferBytes?: number } = {}): Logger {
  const options = {
    level,
    base: undefined,
    formatters: { log: (object: Record<string, unknown>) => redact(object) as Record<string, unknown> },
  };
  if (destination) return pino(options, destination);
  let logger: Logger | undefined;
  const output = stderrOutput({
    bufferBytes: o.bufferBytes ?? LOG_BUFFER_BYTES,
    onCaughtUp: (dropped) => logger?.warn({ dropped }, 'log lines dropped: stderr was not read fast enough (hookrelay_log_dropped_total counts them)'),
  });
  logger = pino(options, output.destination);
  Object.defineProperty(logger, OUTPUT, { value: output });
  return logger;
}

/** Log lines the logger's stderr output has dropped so far (0 for a logger given a destination). */
export function logDropped(log: Logger): number {
  return (log as Logger & { [OUTPUT]?: LogOutput })[OUTPUT]?.dropped() ?? 0;
}

/** Resolves once the lines logged so far are written, or given up on a stalled reader: call it before `process.exit`. */
export function flushLog(log: Logger): Promise<void> {
  return (log as Logger & { [OUTPUT]?: LogOutput })[OUTPUT]?.flush() ?? Promise.resolve();
}
