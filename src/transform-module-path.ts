import { extname, isAbsolute, win32 } from 'node:path';

/**
 * What a mapping's `transform.module` may name, shared by the config loader (which checks the
 * text of the path at load) and the engine (which checks the file it resolves to on disk,
 * engine/transform-module.ts). Below both, so that config/ need not import engine/ (STYLE.md
 * #14) and a transform worker process loads nothing of the config to know it.
 */

/** The extensions a transform module may have (TypeScript loads through tsx). */
export const TRANSFORM_EXTENSIONS: readonly string[] = ['.ts', '.mts', '.js', '.mjs', '.cjs'];

/**
 * The rules a `transform.module` is checked against without the file system; whether the
 * file is there, and stays inside `hooks.transformsDir` through symlinks, the engine checks
 * when it loads it (engine/transform-module.ts).
 */
export function transformPathProblem(module: string): string | undefined {
  if (isAbsolute(module) || win32.isAbsolute(module)) return 'must be a path relative to hooks.transformsDir, not an absolute path';
  if (module.split(/[\\/]/).includes('..')) return 'must not contain ".." segments: move the file into hooks.transformsDir';
  if (!TRANSFORM_EXTENSIONS.includes(extname(module).toLowerCase())) return `must end in one of ${TRANSFORM_EXTENSIONS.join(', ')}`;
  return undefined;
}
