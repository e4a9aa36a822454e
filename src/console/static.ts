import { readFileSync } from 'node:fs';

/**
 * The console's static files, read once at load (a request does no file reads, STYLE.md #2)
 * and served from memory under `/console/static/NAME`: the sign-in page needs them, so they
 * are the only console files served without a session — they hold nothing from the gateway.
 */
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
