import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every Markdown file a reader of the repository meets: READMEs anywhere, CONTRIBUTING.md, docs/. */
function docs(dir = ROOT): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...docs(full));
    else if (entry.name.endsWith('.md')) out.push(full);
  }
  return out;
}

// Issue 32: the README and docs pointed to CONTRACT.md and a conformance kit in ../shared,
// neither of which is in the repository. The docs stand on their own.
describe('docs stand on their own', () => {
  it('no README, CONTRIBUTING.md or page of docs/ names CONTRACT.md or ../shared', () => {
    const files = docs();
    expect(files.map((f) => path.relative(ROOT, f))).to.include.members(['README.md', 'CONTRIBUTING.md', 'docs/several-instances.md']);
    const found: string[] = [];
    for (const file of files) {
      fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        if (/\bCONTRACT\b|\.\.\/shared/.test(line)) found.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found, found.join('\n')).to.deep.equal([]);
  });
});
