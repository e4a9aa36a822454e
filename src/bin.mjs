#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=50 --enable-experimental-regexp-engine
// The `hookrelay` bin. It runs the build of src/ in dist/ (scripts/build.mjs; `npm ci`,
// `npm start`, `npm test` and `npm run bench` make it first): a bundle of plain JavaScript
// loads in a fraction of the time tsx took to compile the sources at every start (measured:
// see docs/performance.md). tsx is loaded only by transform workers whose transforms are
// TypeScript (engine/transform-worker.mjs).
// V8 heap flags only work on the command line (or NODE_OPTIONS), hence the shebang; `npm
// start` and `npm run bench` pass them too:
// - --max-semi-space-size=4 (MiB) caps V8's young generation, which otherwise grows to 2 × 16
//   MiB under load: ~25 MiB less resident for a few more (cheap) scavenges.
// - --heap-growing-percent=50 lets the old generation grow to 1.5 × what the last full
//   collection left before the next one, instead of V8's own factor (up to 4 ×, chosen from
//   how cheap collections have been): under load the gateway's live heap is ~21 MiB, and
//   with V8's factor its garbage piled up to ~65 MiB between collections (RSS peaks 150–180
//   MiB against 120–130 with the cap; its CPU cost: docs/performance.md).
// `npm start` runs it with `exec` (package.json): npm runs a script under `sh -c`, and a
// supervisor's SIGTERM, which npm passes on to that shell, would end the shell and leave the
// gateway running, holding its port and data directory, never drained.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProblem } from './build-state.mjs';

// A missing or stale build is refused, not made here: an installed copy may not be writable,
// and two gateways starting at once would write the same files under each other.
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const problem = buildProblem(root);
if (problem) {
  process.stderr.write(`hookrelay: ${problem}: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
// Stack traces name dist/ lines; with NODE_OPTIONS=--enable-source-maps, src/*.ts lines (the
// build writes the maps; parsing them costs every start time and memory, so it is a choice).
const { main } = await import('../dist/cli/index.js');
await main(process.argv);
