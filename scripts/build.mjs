#!/usr/bin/env node
// `npm run build`: the gateway's own TypeScript as JavaScript in dist/, bundled with the
// dependencies on its start path; the bin (src/bin.mjs) runs it, and tsx stays only for users'
// TypeScript transforms. A bundle loads in much less time and memory than the same modules as
// separate files (measured: see docs/performance.md).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stampOf } from '../src/build-state.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');

/**
 * What a process starts from: the CLI, a transform worker (through its entry,
 * engine/transform-worker.mjs); and the config's shape and the action bodies' schemas, which
 * the build itself loads to compile their checkers. (The store's writer thread starts from a
 * file of its own: WRITER.) Each lands at its place under dist/ (dist/cli/index.js);
 * the code they share goes to dist/chunks/, one chunk per group of modules loaded together
 * (each command's own, `import()` in cli/modules.ts). Every built file is two folders below
 * the package root, as under src/: a module finds what it reads (presets/, package.json, the
 * console's static files, the worker entries) from its folder's parent, `../engine/…`.
 */
const ENTRIES = ['cli/index.ts', 'engine/transform-worker.ts', 'config/shape.ts', 'engine/action-schemas.ts'];

/**
 * The store's writer thread, as one CommonJS file (dist/store/sqlite-writer.cjs): a thread
 * boots a Node environment of its own, and one that starts from ES modules (an entry and the
 * five chunks it imports) takes ~20 ms more CPU to reach `ready` than one that `require`s a
 * single file (measured: docs/performance.md).
 */
const WRITER = 'store/sqlite-writer.ts';

/**
 * Left to node_modules: native code (better-sqlite3 finds its binary from its own folder),
 * what only some configs or commands load (pg, the model client, the e-mail companion's), and
 * tsx. Everything else a start needs is bundled.
 */
const EXTERNAL = ['better-sqlite3', 'pg', 'openai', 'imapflow', 'mailparser', 'html-to-text', 'tsx', 'esbuild'];

/** What runs from src/ itself, before there is a build: not copied. */
const BIN = ['bin.mjs', 'build-state.mjs'].map((name) => path.join(SRC, name));

/**
 * Handlebars generates each template's code through source-map's SourceNode when it can load
 * that package, for source maps of templates, which hookrelay never asks for (no `srcName`);
 * without it, Handlebars joins the code as plain strings (compiler/code-gen.js, its browser
 * path). The code differs only in that it repeats `container.hooks.helperMissing` and `depth0 !=
 * null ? depth0 : container.nullContext` (always the same sealed object) where it would have
 * made a local alias: the same results, no difference in render time measured (2.2–3.1 µs a
 * render either way), and ~13 % less CPU per template compiled at load (~12 ms of a start with
 * 100 mappings; docs/performance.md), source-map not loaded at all.
 */
const withoutHandlebarsSourceMaps = {
  name: 'without-handlebars-source-maps',
  setup(b) {
    b.onResolve({ filter: /^source-map$/ }, ({ importer }) =>
      (importer.includes(`${path.sep}handlebars${path.sep}`) ? { path: 'source-map', namespace: 'no-source-map' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'no-source-map' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

/**
 * Parts of prom-client that hookrelay never uses, left out of the bundle: its index requires
 * the Pushgateway client (with node's https) and the cluster aggregator, and its process CPU
 * metric requires @opentelemetry/api, which it reads only when exemplars are enabled
 * (lib/metrics/processCpuTotal.js; metrics.ts enables none). Loading the three was ~25 ms of
 * every start (docs/performance.md). Each becomes an empty module: `Pushgateway` and
 * `AggregatorRegistry` are then `{}`, which nothing here calls.
 */
const withoutUnusedPromClient = {
  name: 'without-unused-prom-client',
  setup(b) {
    const unused = /^(?:\.\/lib\/pushgateway|\.\/lib\/cluster|@opentelemetry\/api)$/;
    b.onResolve({ filter: unused }, ({ path: request, importer }) =>
      (importer.includes(`${path.sep}prom-client${path.sep}`) ? { path: request, namespace: 'unused-prom-client' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'unused-prom-client' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

/** Every file under `dir`, absolute. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? files(file) : [file];
  });
}

/**
 * Builds dist/ from src/: into a folder of its own beside it, put in dist/'s place once
 * complete, so that a gateway running from dist/ (a command chunk, a worker entry loaded
 * later) or a build started meanwhile never sees it half written. Writes the stamp last, which
 * src/bin.mjs compares the sources against (src/build-state.mjs).
 */
export async function buildDist() {
  const out = `${DIST}.next-${process.pid}`;
  rmSync(out, { recursive: true, force: true });
  const common = {
    bundle: true,
    external: EXTERNAL,
    platform: 'node',
    target: 'node20',
    // Used with NODE_OPTIONS=--enable-source-maps: stack traces then name src/*.ts lines. Not
    // enabled by default: node would parse them all at every start (docs/performance.md).
    sourcemap: true,
    sourcesContent: false,
    // Less text for V8 to parse at every start (~40 ms of one with 100 mappings,
    // docs/performance.md); names are kept (no minifyIdentifiers), so logs and stack traces
    // still name the functions.
    minifyWhitespace: true,
    minifySyntax: true,
    plugins: [withoutHandlebarsSourceMaps, withoutUnusedPromClient],
    logLevel: 'warning',
  };
  await build({
    ...common,
    entryPoints: ENTRIES.map((entry) => path.join(SRC, entry)),
    outdir: out,
    outbase: SRC,
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    format: 'esm',
    // The bundled CommonJS packages call require() for node's own modules.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  await build({
    ...common,
    entryPoints: [path.join(SRC, WRITER)],
    outfile: path.join(out, WRITER.replace(/\.ts$/, '.cjs')),
    format: 'cjs',
    // esbuild's way to keep import.meta.url in CommonJS (a banner would come before "use strict").
    define: { 'import.meta.url': 'importMetaUrl' },
    inject: [path.join(ROOT, 'scripts', 'import-meta-url.mjs')],
  });
  // The rest is used as it is, found beside the modules that read it (the console's static
  // files, the transform worker's entry).
  for (const file of files(SRC)) {
    if (file.endsWith('.ts') || file.endsWith('.d.mts') || BIN.includes(file)) continue;
    const to = path.join(out, path.relative(SRC, file));
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(file, to);
  }
  await compileCheckers(out);
  writeFileSync(path.join(out, path.relative(DIST, stampOf(ROOT))), `${new Date().toISOString()}\n`);
  const old = `${DIST}.old-${process.pid}`;
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(out, DIST);
  rmSync(old, { recursive: true, force: true });
}

/**
 * The shape checkers (a config's, a preset's list of mappings) and the action bodies' checkers
 * as ajv's standalone code (src/config/shape.ts and src/engine/action-schemas.ts say why), from
 * the modules just built, with the same options as the ajv that would compile them at load.
 */
async function compileCheckers(out) {
  const standaloneCode = createRequire(import.meta.url)('ajv/dist/standalone').default;
  const built = (file) => import(pathToFileURL(path.join(out, file)).href);
  const { createShapeAjv, compileShape, SHAPE_CHECKER, compileMappingListShape, MAPPING_LIST_CHECKER } = await built('config/shape.js');
  const shapeAjv = createShapeAjv({ code: { source: true } });
  writeFileSync(path.join(out, SHAPE_CHECKER), standaloneCode(shapeAjv, compileShape(shapeAjv)));
  writeFileSync(path.join(out, MAPPING_LIST_CHECKER), standaloneCode(shapeAjv, compileMappingListShape(shapeAjv)));
  const { createActionAjv, compileActionSchemas, ACTION_CHECKERS } = await built('engine/action-schemas.js');
  const actionAjv = createActionAjv({ code: { source: true } });
  for (const [name, checker] of Object.entries(compileActionSchemas(actionAjv))) {
    writeFileSync(path.join(out, ACTION_CHECKERS[name]), standaloneCode(actionAjv, checker));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildDist();
