import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * One structured logger for the process (JSON lines on stderr, so stdout stays clean for
 * command output such as `hookrelay test`). Payloads and secrets are never logged above
 * debug level; the redact list is a second line of defence for fields that carry them.
 */
export function createLogger(level: string = 'info'): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['token', 'apiKey', 'botToken', 'authorization', '*.token', '*.apiKey', '*.botToken'], censor: '[redacted]' },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything: for specs and dry runs. */
export const silentLogger: Logger = pino({ level: 'silent' });
