/**
 * `npm run docs`: regenerates the generated sections of the docs in place — the configuration
 * reference (from the schema) in docs/configuration.md, the error catalog (from src/errors.ts)
 * and the run error catalog (from src/run-errors.ts) in docs/errors.md, and the delivery
 * provider guide (from src/providers/) in docs/providers.md; doc-sections.ts says
 * which goes where. Specs check that the files match, so the docs cannot drift from the code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { GENERATED_SECTIONS, repoFile, withSection } from './doc-sections.js';

const files = [...new Set(GENERATED_SECTIONS.map((s) => s.file))];
for (const file of files) {
  let text = readFileSync(repoFile(file), 'utf8');
  for (const section of GENERATED_SECTIONS.filter((s) => s.file === file)) {
    text = withSection(text, section.name, file, section.render());
  }
  writeFileSync(repoFile(file), text);
  process.stdout.write(`${file}: ${GENERATED_SECTIONS.filter((s) => s.file === file).map((s) => s.name).join(', ')} regenerated\n`);
}
