/** `npm run docs`: regenerates the generated sections of docs/ (sections.ts); specs check the files match, so the docs cannot drift. */
import { readFileSync, writeFileSync } from 'node:fs';
import { GENERATED_SECTIONS, repoFile, withSection } from './sections.js';

const files = [...new Set(GENERATED_SECTIONS.map((s) => s.file))];
for (const file of files) {
  let text = readFileSync(repoFile(file), 'utf8');
  for (const section of GENERATED_SECTIONS.filter((s) => s.file === file)) {
    text = withSection(text, section.name, file, section.render());
  }
  writeFileSync(repoFile(file), text);
  process.stdout.write(`${file}: ${GENERATED_SECTIONS.filter((s) => s.file === file).map((s) => s.name).join(', ')} regenerated\n`);
}
