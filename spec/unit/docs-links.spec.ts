import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../support/gateway.js';

/** The user and contributor docs: README.md, CONTRIBUTING.md and every Markdown file under docs/. */
function docFiles(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()];
}

/** The text outside fenced code blocks (```), line by line; fences may be indented (inside a list item). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/**
 * GitHub's anchor of a heading (github-slugger): the rendered text in lower case, without
 * punctuation and symbols (letters, digits, marks, `_`, `-` and spaces stay), spaces as `-`;
 * a repeated slug gets `-1`, `-2`, ….
 */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const rendered = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = rendered.toLowerCase().replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every link target `[text](target)` / `![alt](target)` outside code, with its line. */
function links(text: string): { target: string; line: number }[] {
  const lines = prose(text).map((l) => l.replace(/`[^`]*`/g, ''));
  const joined = lines.join('\n');
  const out: { target: string; line: number }[] = [];
  for (const m of joined.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    out.push({ target: m[1]!, line: joined.slice(0, m.index).split('\n').length });
  }
  return out;
}

/** What is wrong with one relative link of `file`, or undefined when it resolves. */
function broken(file: string, target: string): string | undefined {
  if (/^(https?|mailto):/.test(target)) return undefined;
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = pathPart === '' ? path.join(ROOT, file) : path.join(ROOT, path.dirname(file), decodeURIComponent(pathPart));
  if (!resolved.startsWith(ROOT)) return 'leads outside the repository';
  if (!fs.existsSync(resolved)) return 'no such file';
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md')) return 'an anchor into a file that is not Markdown';
  return anchors(fs.readFileSync(resolved, 'utf8')).has(anchor) ? undefined : `no heading with the anchor #${anchor}`;
}

describe('docs: every relative link and #anchor resolves', () => {
  it('finds the files and their links (the check below checks something)', () => {
    const files = docFiles();
    expect(files).to.include.members(['README.md', 'CONTRIBUTING.md', 'docs/configuration.md', 'docs/performance.md']);
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(links(readme).filter((l) => l.target.startsWith('docs/')).length).to.be.greaterThan(10);
  });

  it('computes anchors as GitHub does', () => {
    const md = '# Mappings\n## Transforms (TypeScript or JavaScript)\n### `whatsapp`: WhatsApp Cloud API\n## E-mail\n## E-mail\n```sh\n# not a heading\n```\n';
    expect([...anchors(md)]).to.deep.equal(['mappings', 'transforms-typescript-or-javascript', 'whatsapp-whatsapp-cloud-api', 'e-mail', 'e-mail-1']);
  });

  it('README.md, CONTRIBUTING.md and docs/*.md have no broken relative link or anchor', () => {
    const problems: string[] = [];
    for (const file of docFiles()) {
      for (const { target, line } of links(fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
        const why = broken(file, target);
        if (why) problems.push(`${file}:${line}: ${target}: ${why}`);
      }
    }
    expect(problems).to.deep.equal([]);
  });
});
