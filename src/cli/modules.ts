// Each command loads what it needs when it runs: `--help` and `check` should not pay for
// Koa, SQLite and the model client (start-up time is one of the benchmark's figures).

/** The config loader (read, `${VAR}`, validate). */
export const configLoader = () => import('../config/load.js');
/** The admin and hooks tokens (first-use token). */
export const tokenModule = () => import('../config/token.js');
/** Config and engine in one pass. */
export const compileModule = () => import('../compile-config.js');
/** Opening a store. */
export const storeModule = () => import('../store/open.js');
/** `store copy`. */
export const copyModule = () => import('../store/copy.js');
/** The logger. */
export const logModule = () => import('../log.js');
/** The listener's composition root. */
export const serveModule = () => import('../serve.js');
/** `check`'s warnings. */
export const warningsModule = () => import('../config/warnings.js');
/** `test`'s dry run. */
export const dryRunModule = () => import('../dry-run.js');
/** `test --fixtures` and `fixture`. */
export const fixturesModule = () => import('../fixtures/index.js');
/** `email setup`. */
export const emailSetupModule = () => import('../email/setup.js');
/** `email run`, the companion. */
export const emailRunModule = () => import('../email/run.js');
/** The IMAP watcher (its WatchError). */
export const emailWatcherModule = () => import('../email/watcher.js');
/** Store text made safe for a terminal. */
export const printableModule = () => import('../printable.js');
