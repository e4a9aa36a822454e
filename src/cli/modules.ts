import { createRequire } from 'node:module';

// Each command loads what it needs when it runs: `--help` and `check` should not pay for
// Koa, SQLite and the model client (start-up time is one of the benchmark's figures).
// require(), not import(): the bin runs the sources through tsx's CommonJS hook (src/bin.mjs).
const require = createRequire(import.meta.url);

/** The config loader (read, `${VAR}`, validate). */
export const configLoader = async (): Promise<typeof import('../config/load.js')> => require('../config/load.ts');
/** The admin and hooks tokens (first-use token). */
export const tokenModule = async (): Promise<typeof import('../config/token.js')> => require('../config/token.ts');
/** Config and engine in one pass. */
export const compileModule = async (): Promise<typeof import('../compile-config.js')> => require('../compile-config.ts');
/** Opening a store. */
export const storeModule = async (): Promise<typeof import('../store/open.js')> => require('../store/open.ts');
/** `store copy`. */
export const copyModule = async (): Promise<typeof import('../store/copy.js')> => require('../store/copy.ts');
/** The logger. */
export const logModule = async (): Promise<typeof import('../log.js')> => require('../log.ts');
/** The listener's composition root. */
export const serveModule = async (): Promise<typeof import('../serve.js')> => require('../serve.ts');
/** `check`'s warnings. */
export const warningsModule = async (): Promise<typeof import('../config/warnings.js')> => require('../config/warnings.ts');
/** `test`'s dry run. */
export const dryRunModule = async (): Promise<typeof import('../dry-run.js')> => require('../dry-run.ts');
/** `test --fixtures` and `fixture`. */
export const fixturesModule = async (): Promise<typeof import('../fixtures/index.js')> => require('../fixtures/index.ts');
/** `email setup`. */
export const emailSetupModule = async (): Promise<typeof import('../email/setup.js')> => require('../email/setup.ts');
/** `email run`, the companion. */
export const emailRunModule = async (): Promise<typeof import('../email/run.js')> => require('../email/run.ts');
/** The IMAP watcher (its WatchError). */
export const emailWatcherModule = async (): Promise<typeof import('../email/watcher.js')> => require('../email/watcher.ts');
/** Store text made safe for a terminal. */
export const printableModule = async (): Promise<typeof import('../printable.js')> => require('../printable.ts');
