import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Mocha requires this before any spec file (.mocharc.json): the specs start the gateway as a
 * user does, through src/bin.mjs, which runs the build in dist/, so a run builds it first —
 * once, in mocha's main process: a `--parallel` worker (MOCHA_WORKER_ID) starts after the build,
 * and rebuilding there would rewrite dist/ under the gateways the other worker runs.
 */
if (process.env.MOCHA_WORKER_ID === undefined) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`the build failed (npm run build):\n${build.stderr}${build.error?.message ?? ''}`);
}
