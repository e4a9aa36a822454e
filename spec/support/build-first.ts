import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildProblem } from '../../src/build-state.mjs';

/**
 * Mocha requires this before any spec file (.mocharc.json): the specs start the gateway as a
 * user does, through src/bin.mjs, which runs the build in dist/ — so a run builds it first
 * when it is missing or older than src/ (src/build-state.mjs, the bin's own check), and no spec
 * runs a stale one. A current build is left alone: another mocha run may be using it.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const build = buildProblem(root) === undefined ? { status: 0, stderr: '', error: undefined } : spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
if (build.status !== 0) throw new Error(`the build failed (npm run build):\n${build.stderr}${build.error?.message ?? ''}`);
