import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from './gateway.js';

/** A section of a Markdown file: the quick start and the cookbook are run wherever they live. */
export interface Section { file: string; heading: string }
export const QUICK_START: Section = { file: 'README.md', heading: '## Quick start' };
export const COOKBOOK: Section = { file: 'README.md', heading: '## Cookbook' };
export const ANSWERING: Section = { file: 'README.md', heading: '### Answering senders' };

/** The text of `section`: from its heading to the next heading of the same or a higher level. */
export function sectionText({ file, heading }: Section): string {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  expect(start, `${file}: ${heading}`).to.be.greaterThan(-1);
  const level = heading.split(' ')[0]!;
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The fenced blocks of `lang` in `section`. */
export function blocks(section: Section, lang: string): string[] {
  return [...sectionText(section).matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
}
