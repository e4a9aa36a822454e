// Each command loads what it needs when it runs: `--help` and `check` need no Koa, SQLite or model client.

export const configLoader = () => import('../config/load.js');
export const tokenModule = () => import('../config/token.js');
export const compileModule = () => import('../compile-config.js');
export const storeModule = () => import('../store/open.js');
export const copyModule = () => import('../store/copy.js');
export const logModule = () => import('../log.js');
export const serveModule = () => import('../serve.js');
export const warningsModule = () => import('../config/warnings.js');
export const dryRunModule = () => import('../dry-run.js');
export const fixturesModule = () => import('../fixtures/index.js');
export const emailSetupModule = () => import('../email/setup.js');
export const emailRunModule = () => import('../email/run.js');
export const emailWatcherModule = () => import('../email/watcher.js');
export const printableModule = () => import('../printable.js');
