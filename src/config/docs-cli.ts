/**
 * `npm run docs`: regenerates the README's generated sections in place — the configuration
 * reference (from the schema), the error catalog (from src/errors.ts), the run error catalog
 * (from src/run-errors.ts) and the delivery provider guide (from src/providers/).
 * Specs check that the README matches, so the docs cannot drift from the code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { configReference, errorCatalog, providersGuide, runErrorCatalog } from './docs.js';

const file = new URL('../../README.md', import.meta.url);
let readme = readFileSync(file, 'utf8');
const sections = [
  ['config-reference', configReference()],
  ['error-catalog', errorCatalog()],
  ['run-error-catalog', runErrorCatalog()],
  ['providers', providersGuide()],
] as const;
for (const [name, text] of sections) {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const a = readme.indexOf(start);
  const b = readme.indexOf(end);
  if (a < 0 || b < a) throw new Error(`README.md needs the markers ${start} … ${end}`);
  readme = `${readme.slice(0, a + start.length)}\n${text.trim()}\n${readme.slice(b)}`;
}
writeFileSync(file, readme);
process.stdout.write('README.md: config reference, error catalogs and provider guide regenerated\n');
