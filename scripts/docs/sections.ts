import { readFileSync } from 'node:fs';
import { configReference, errorCatalog, providersGuide, runErrorCatalog } from './render.js';
import { sendersGuide } from './senders.js';

/** Where `npm run docs` writes each generated section, between `<!-- NAME:start -->` and `<!-- NAME:end -->`; the docs specs read them back from here. */
export interface GeneratedSection {
  readonly name: string;
  /** Relative to the repository root. */
  readonly file: string;
  /** Renders the section's text from the code (render.ts). */
  readonly render: () => string;
}

export const GENERATED_SECTIONS: readonly GeneratedSection[] = [
  { name: 'config-reference', file: 'docs/configuration.md', render: configReference },
  { name: 'error-catalog', file: 'docs/errors.md', render: errorCatalog },
  { name: 'run-error-catalog', file: 'docs/errors.md', render: runErrorCatalog },
  { name: 'providers', file: 'docs/providers.md', render: providersGuide },
  { name: 'senders', file: 'docs/senders.md', render: sendersGuide },
];

const ROOT = new URL('../../', import.meta.url);

/** The absolute URL of a repository file (`docs/errors.md`). */
export function repoFile(file: string): URL {
  return new URL(file, ROOT);
}

/** The generated section called `name`; throws for an unknown name. */
export function generatedSection(name: string): GeneratedSection {
  const section = GENERATED_SECTIONS.find((s) => s.name === name);
  if (!section) throw new Error(`no generated section called ${name}`);
  return section;
}

/** Where a section's text starts and ends in `text` (the markers excluded); throws naming the file when a marker is missing. */
function bounds(text: string, name: string, file: string): [number, number] {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0) throw new Error(`${file} has no ${start}`);
  if (b < a) throw new Error(`${file} has no ${end} after ${start}`);
  return [a + start.length, b];
}

/** `text` with the section `name` (in `file`) replaced by `body`, one line break either side. */
export function withSection(text: string, name: string, file: string, body: string): string {
  const [a, b] = bounds(text, name, file);
  return `${text.slice(0, a)}\n${body.trim()}\n${text.slice(b)}`;
}

/** The text a docs file now carries between the markers of section `name`, trimmed. */
export function generatedSectionText(name: string): string {
  const { file } = generatedSection(name);
  const text = readFileSync(repoFile(file), 'utf8');
  const [a, b] = bounds(text, name, file);
  return text.slice(a, b).trim();
}
