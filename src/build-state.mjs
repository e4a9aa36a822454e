import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Whether dist/ is a current build of src/ (scripts/build.mjs makes it; src/bin.mjs runs it).
 * Plain JavaScript beside the bin, which reads it before there is anything built to load.
 */

/** The stamp the build writes last, under `root` (the package's folder). */
export const stampOf = (root) => path.join(root, 'dist', '.built');

/**
 * Why dist/ under `root` cannot run: missing, or older than a file of src/ or the build script
 * (by mtime) — else undefined. Equal times are current: a package
 * from `npm pack` gives every file the same one.
 */
export function buildProblem(root) {
  let built;
  try {
    built = statSync(stampOf(root)).mtimeMs;
  } catch {
    return 'the build (dist/) is missing';
  }
  const newer = newerIn(path.join(root, 'src'), built) ?? newerFile(path.join(root, 'scripts', 'build.mjs'), built);
  return newer ? `the build (dist/) is older than ${path.relative(root, newer)}` : undefined;
}

/** The first file under `dir` changed after `time`, if any. */
function newerIn(dir, time) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue; // an editor's swap file
    const file = path.join(dir, e.name);
    const found = e.isDirectory() ? newerIn(file, time) : newerFile(file, time);
    if (found) return found;
  }
  return undefined;
}

function newerFile(file, time) {
  try {
    return statSync(file).mtimeMs > time ? file : undefined;
  } catch {
    return undefined; // no build script: an installed copy
  }
}
