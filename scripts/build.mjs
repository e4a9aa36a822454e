#!/usr/bin/env node
// `npm run build` (also `prepare`, `prestart` and the specs' first step): src/ bundled by
// esbuild into dist/, which the bin (src/bin.mjs) runs. tsx stays only for users' TypeScript
// transforms, in the transform workers.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');

// The CLI, the transform worker, and the two modules whose ajv checkers are compiled below.
// Each keeps its place under dist/ as under src/: modules find their files (presets/, the
// console's static files, the worker entries) from their folder's parent.
const ENTRIES = ['cli/index.ts', 'engine/transform-worker.ts', 'config/shape.ts', 'engine/action-schemas.ts'];
// The store's writer and reader threads are each started from a single CommonJS file.
const THREADS = ['store/sqlite-writer.ts', 'store/sqlite-reader.ts'];
// Native code (better-sqlite3 finds its binary from its own folder), what only some configs
// or commands load, and tsx.
const EXTERNAL = ['better-sqlite3', 'pg', 'openai', 'imapflow', 'mailparser', 'html-to-text', 'tsx', 'esbuild'];

// A JSON module as JSON.parse of its text, which V8 reads faster than the same object literal
// (https://v8.dev/blog/cost-of-javascript-2019#json): koa's two copies of mime-db are evaluated at start-up.
const jsonParse = {
  name: 'json-parse',
  setup(b) {
    b.onLoad({ filter: /\.json$/ }, (args) => ({ contents: `module.exports = JSON.parse(${JSON.stringify(JSON.stringify(JSON.parse(readFileSync(args.path, 'utf8'))))});`, loader: 'js' }));
  },
};

const common = {
  bundle: true,
  plugins: [jsonParse],
  external: EXTERNAL,
  platform: 'node',
  target: 'node20',
  // With NODE_OPTIONS=--enable-source-maps, stack traces name src/*.ts lines.
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
};

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

rmSync(DIST, { recursive: true, force: true });
await build({
  ...common,
  entryPoints: ENTRIES.map((entry) => path.join(SRC, entry)),
  outdir: DIST,
  outbase: SRC,
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  format: 'esm',
  // The bundled CommonJS packages call require() for node's own modules.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
for (const thread of THREADS) {
  await build({
    ...common,
    entryPoints: [path.join(SRC, thread)],
    outfile: path.join(DIST, thread.replace(/\.ts$/, '.cjs')),
    format: 'cjs',
    // esbuild's way to keep import.meta.url in CommonJS (https://esbuild.github.io/api/#inject).
    define: { 'import.meta.url': 'importMetaUrl' },
    inject: [path.join(ROOT, 'scripts', 'import-meta-url.mjs')],
  });
}
// The rest is used as it is (the console's static files, the transform worker's entry).
for (const file of files(SRC)) {
  if (file.endsWith('.ts') || file === path.join(SRC, 'bin.mjs')) continue;
  const to = path.join(DIST, path.relative(SRC, file));
  mkdirSync(path.dirname(to), { recursive: true });
  copyFileSync(file, to);
}

// The config shape and action body checkers as ajv's standalone code
// (https://ajv.js.org/standalone.html), with the options of the ajv that would compile them at load.
const standaloneCode = createRequire(import.meta.url)('ajv/dist/standalone').default;
const built = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { createShapeAjv, compileShape, SHAPE_CHECKER } = await built('config/shape.js');
const shapeAjv = createShapeAjv({ code: { source: true } });
writeFileSync(path.join(DIST, SHAPE_CHECKER), standaloneCode(shapeAjv, compileShape(shapeAjv)));
const { createActionAjv, compileActionSchemas, ACTION_CHECKERS } = await built('engine/action-schemas.js');
const actionAjv = createActionAjv({ code: { source: true } });
for (const [name, checker] of Object.entries(compileActionSchemas(actionAjv))) {
  writeFileSync(path.join(DIST, ACTION_CHECKERS[name]), standaloneCode(actionAjv, checker));
}
