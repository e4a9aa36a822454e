import { pino, type Logger } from 'pino';

/** A logger that drops everything, for specs whose log lines are not under test. */
export const silentLogger: Logger = pino({ level: 'silent' });
