import { readFileSync } from 'node:fs';

/** The console's static files, read once at load (STYLE.md #2); served without a session: they hold nothing of the gateway. */
export const STATIC: Readonly<Record<string, { type: string; bytes: Buffer }>> = {
  'console.css': { type: 'text/css; charset=utf-8', bytes: load('console.css') },
  'console.js': { type: 'text/javascript; charset=utf-8', bytes: load('console.js') },
  'favicon.svg': { type: 'image/svg+xml', bytes: load('favicon.svg') },
};

// From this folder's parent: the build bundles this file into dist/chunks/ and copies the
// files to dist/console/static/ (scripts/build.mjs).
function load(name: string): Buffer {
  return readFileSync(new URL(`../console/static/${name}`, import.meta.url));
}
