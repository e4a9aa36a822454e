import { createRequire } from 'node:module';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TransformInput } from '../transform-types.js';
import { TRANSFORM_EXTENSIONS } from '../transform-module-path.js';

/** A transform's callable export: may be async; returns a partial action, `null` or `undefined`. */
export type TransformFn = (input: TransformInput) => unknown;

/** Either the resolved file or what the user should change. */
export type Resolved = { file: string } | { problem: string };

/** Finds `transform.module` inside `transformsDir` (absolute) on disk: refuses a missing file and anything whose real path leaves the real path of the directory. */
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

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);
const requireModule = createRequire(import.meta.url);

/** Loads a module: TypeScript through `require` (tsx), JavaScript through `import()`; throws a one-line Error. */
export async function importModule(file: string, dir = path.dirname(file)): Promise<Record<string, unknown>> {
  try {
    if (TS_EXTENSIONS.has(path.extname(file).toLowerCase())) return requireModule(file) as Record<string, unknown>;
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? compileErrors(err.message, dir) ?? err.message.split('\n')[0] : String(err);
    throw new Error(`could not load ${shortName(file, dir)}: ${message}`);
  }
}

function compileErrors(message: string, dir: string): string | undefined {
  if (!/^(Transform|Build) failed with \d+ errors?:/.test(message)) return undefined;
  const found = message.split('\n').slice(1).map((line) => {
    const m = /^(.+):(\d+):(\d+): ERROR: (.*)$/.exec(line);
    return m ? `${shortName(m[1]!, dir)}:${m[2]}:${Number(m[3]) + 1}: ${m[4]}` : undefined;
  }).filter((line) => line !== undefined);
  return found.length ? found.join('; ') : undefined;
}

function shortName(file: string, dir: string): string {
  const rel = path.relative(dir, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** Picks the function to call: `exportName` if given, else `default`, else `transform`. */
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
