import { extname, isAbsolute, win32 } from 'node:path';

/** What `transform.module` may name: the loader checks the text, the engine the file (STYLE.md #14). */

export const TRANSFORM_EXTENSIONS: readonly string[] = ['.ts', '.mts', '.js', '.mjs', '.cjs'];

export function transformPathProblem(module: string): string | undefined {
  if (isAbsolute(module) || win32.isAbsolute(module)) return 'must be a path relative to hooks.transformsDir, not an absolute path';
  if (module.split(/[\\/]/).includes('..')) return 'must not contain ".." segments: move the file into hooks.transformsDir';
  if (!TRANSFORM_EXTENSIONS.includes(extname(module).toLowerCase())) return `must end in one of ${TRANSFORM_EXTENSIONS.join(', ')}`;
  return undefined;
}
