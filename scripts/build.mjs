#!/usr/bin/env node
// `npm run build`: the gateway's own TypeScript (src/**/*.ts) as JavaScript in dist/, one file
// per source file at the same place (dist/cli/index.js for src/cli/index.ts), so that every
// path a module finds relative to itself (presets/, package.json, the console's static files,
// the worker entry points) is found from dist/ as from src/. The bin runs dist/; tsx stays only
// for users' TypeScript transforms. Source maps point stack traces back at src/*.ts lines.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stampOf } from '../src/build-state.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
/** What runs from src/ itself, before there is a build: not copied. */
const BIN = ['bin.mjs', 'build-state.mjs'].map((name) => path.join(SRC, name));

/** Every file under `dir`, absolute. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? files(file) : [file];
  });
}

/**
 * Builds dist/ from src/ (about 0.2 s). Starts from an empty folder, so that a source file
 * deleted or renamed leaves no module behind; writes the stamp last, which src/bin.mjs
 * compares the sources against (src/build-state.mjs).
 */
export async function buildDist() {
  rmSync(DIST, { recursive: true, force: true });
  const all = files(SRC);
  const typescript = all.filter((f) => f.endsWith('.ts'));
  await build({
    entryPoints: typescript,
    outdir: DIST,
    outbase: SRC,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    // A stack trace needs the mappings, not the text: src/ is beside the map.
    sourcesContent: false,
    logLevel: 'warning',
  });
  // The rest is used as it is, found beside the modules that read it (the console's static
  // files, the transform worker's entry).
  for (const file of all) {
    if (file.endsWith('.ts') || BIN.includes(file)) continue;
    const to = path.join(DIST, path.relative(SRC, file));
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(file, to);
  }
  await compileShapeChecker();
  writeFileSync(stampOf(ROOT), `${new Date().toISOString()}\n`);
}

/**
 * The config's shape checker as ajv's standalone code (dist/config/shape.ts says why), from
 * the modules just built, with the same options as the ajv that would compile it at load.
 */
async function compileShapeChecker() {
  const [{ default: standaloneCode }, { createShapeAjv, SHAPE_CHECKER }, { configSchema }] = await Promise.all([
    import('ajv/dist/standalone/index.js').then((m) => m.default),
    import(pathToFileURL(path.join(DIST, 'config', 'shape.js')).href),
    import(pathToFileURL(path.join(DIST, 'config', 'schema.js')).href),
  ]);
  const ajv = createShapeAjv({ code: { source: true } });
  writeFileSync(path.join(DIST, 'config', SHAPE_CHECKER), standaloneCode.default(ajv, ajv.compile(configSchema)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildDist();
