import { createRequire } from 'node:module';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TransformInput } from '../transform-types.js';
import { TRANSFORM_EXTENSIONS } from '../transform-module-path.js';

/**
 * A transform's callable export, as the engine sees it: may be async; returns a partial
 * action, `null` or `undefined` — or anything else, which callTransform refuses.
 */
export type TransformFn = (input: TransformInput) => unknown;

/** Either the resolved file or what the user should change. */
export type Resolved = { file: string } | { problem: string };

/**
 * Finds `transform.module` inside `transformsDir` (absolute) on disk: refuses a missing file
 * and anything whose real path leaves the real path of the directory. A symlink whose target
 * stays inside is fine. The rules on the text of the path (relative, no `..`, an extension
 * of {@link TRANSFORM_EXTENSIONS}) are the loader's (src/transform-module-path.ts).
 */
export async function resolveTransformModule(module: string, transformsDir: string): Promise<Resolved> {
  let realDir: string;
  try {
    realDir = await realpath(transformsDir);
  } catch {
    return { problem: `hooks.transformsDir (${transformsDir}) does not exist: create it or fix hooks.transformsDir` };
  }
  let real: string;
  try {
    real = await realpath(path.resolve(transformsDir, module));
  } catch {
    return { problem: `file not found: ${module} in hooks.transformsDir (${transformsDir})` };
  }
  if (!real.startsWith(realDir + path.sep)) {
    return { problem: `resolves outside hooks.transformsDir (a symlink to ${real}): copy the file into ${transformsDir}` };
  }
  if (!TRANSFORM_EXTENSIONS.includes(path.extname(real).toLowerCase())) {
    return { problem: `resolves to ${path.basename(real)}, which does not end in ${TRANSFORM_EXTENSIONS.join(', ')}` };
  }
  if (!(await stat(real)).isFile()) {
    return { problem: `${module} is not a file` };
  }
  return { file: real };
}

/** TypeScript modules load through tsx's CommonJS hook (the worker's entry, transform-worker.mjs, installs it; `--import tsx` too). */
const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);
const requireModule = createRequire(import.meta.url);

/**
 * Loads a module: TypeScript through `require` (tsx transpiles it), JavaScript with dynamic
 * `import()` of its file URL (native ESM or CommonJS, as its extension and package say).
 * Throws an Error whose one-line message says why it failed to load.
 */
export async function importModule(file: string, dir = path.dirname(file)): Promise<Record<string, unknown>> {
  try {
    if (TS_EXTENSIONS.has(path.extname(file).toLowerCase())) return requireModule(file) as Record<string, unknown>;
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? compileErrors(err.message, dir) ?? err.message.split('\n')[0] : String(err);
    throw new Error(`could not load ${shortName(file, dir)}: ${message}`);
  }
}

/**
 * esbuild's (through tsx) errors, each as `file:line:column: text`, file relative to `dir`
 * and column counted from 1 as editors do — or undefined for any other error. Its message is
 * "Transform failed with N error(s):" and then one line per error,
 * `/abs/file.ts:LINE:COL: ERROR: text` (COL from 0); that first line alone said nothing.
 */
function compileErrors(message: string, dir: string): string | undefined {
  if (!/^(Transform|Build) failed with \d+ errors?:/.test(message)) return undefined;
  const found = message.split('\n').slice(1).map((line) => {
    const m = /^(.+):(\d+):(\d+): ERROR: (.*)$/.exec(line);
    return m ? `${shortName(m[1]!, dir)}:${m[2]}:${Number(m[3]) + 1}: ${m[4]}` : undefined;
  }).filter((line) => line !== undefined);
  return found.length ? found.join('; ') : undefined;
}

/** A file as the user named it: relative to hooks.transformsDir when inside it. */
function shortName(file: string, dir: string): string {
  const rel = path.relative(dir, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/**
 * Picks the function to call: `exportName` if given, else `default`, else `transform`.
 * A CommonJS module (`module.exports = { transform }`) is searched too, through its
 * `default`. Own properties only, so `constructor` never finds Object's.
 */
export function pickExport(mod: Record<string, unknown>, exportName?: string): { fn: TransformFn } | { problem: string } {
  const sources = [mod];
  const fallback = mod.default;
  if (fallback !== null && typeof fallback === 'object') sources.push(fallback as Record<string, unknown>);
  const names = exportName !== undefined ? [exportName] : ['default', 'transform'];
  for (const name of names) {
    for (const source of sources) {
      if (Object.hasOwn(source, name) && typeof source[name] === 'function') return { fn: source[name] as TransformFn };
    }
  }
  const found = listExports(sources);
  if (exportName !== undefined) {
    return { problem: `export "${exportName}" is not a function; the module exports: ${found}` };
  }
  return {
    problem: `no function to call: export default or a function named "transform", or set transform.export (the module exports: ${found})`,
  };
}

function listExports(sources: Record<string, unknown>[]): string {
  const names = new Set<string>();
  for (const source of sources) for (const name of Object.keys(source)) names.add(`${name} (${typeof source[name]})`);
  return names.size > 0 ? [...names].join(', ') : 'nothing';
}

/** A transform that loaded, or the problem and the config key it belongs to. */
export type LoadedTransform = { fn: TransformFn } | { problem: string; key: 'module' | 'export' };
