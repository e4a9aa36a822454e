#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=50 --enable-experimental-regexp-engine
// The `hookrelay` bin: runs the build of src/ in dist/ (scripts/build.mjs, made by `npm
// install` and `npm start`). Node takes V8 flags only on its command line, hence the shebang
// (`npm start` runs the bin itself, so this is the one list):
// - --enable-experimental-regexp-engine: the linear-time regex engine for users' regexes
//   (engine/linear-regexp.ts, https://v8.dev/blog/non-backtracking-regexp).
// - --max-semi-space-size=4 (MiB) caps V8's young generation, and --heap-growing-percent=50
//   lets the old generation grow to 1.5 × what the last full collection left: less resident
//   memory under load for a few more collections.
// `npm start` runs it with `exec`: npm runs a script under `sh -c`, and a supervisor's
// SIGTERM would otherwise end the shell and leave the gateway running, never drained.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const entry = path.join(root, 'dist', 'cli', 'index.js');
if (!fs.existsSync(entry)) {
  process.stderr.write(`hookrelay: the build (dist/) is missing: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
// Stack traces name dist/ lines; with NODE_OPTIONS=--enable-source-maps, src/*.ts lines.
const { main } = await import('../dist/cli/index.js');
await main(process.argv);
