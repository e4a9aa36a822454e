import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';

/**
 * The import rules of STYLE.md (the one-way flow; #14, shared shapes sit below both users),
 * checked on every file under src/ so that an arrow the wrong way fails here, not in a review.
 * Type-only imports count: a type the lower floor takes from the upper one is the same wrong
 * arrow, and the next change turns it into a value import.
 */

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** One import: the importing file and what it names (a file under src/, or a package). */
interface Arrow {
  from: string;
  to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs|js)$/.test(e.name) ? [path] : [];
  });
}

/** `./x.js` written for `./x.ts` (what tsx and tsc resolve): the file that is there. */
function resolveRelative(from: string, specifier: string): string {
  const path = join(dirname(from), specifier);
  const asTs = path.replace(/\.js$/, '.ts');
  return !existsSync(path) && existsSync(asTs) ? asTs : path;
}

/** Every import, re-export and literal dynamic import of every file under src/. */
function arrows(): Arrow[] {
  return sourceFiles(SRC).flatMap((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const from = relative(SRC, file).split(sep).join('/');
    return importedFiles.map(({ fileName }) => ({
      from,
      to: fileName.startsWith('.') ? relative(SRC, resolveRelative(file, fileName)).split(sep).join('/') : fileName,
    }));
  });
}

/** The top-level entry a src/ path belongs to: its folder (`config/`), or the file itself (`errors.ts`). */
function floor(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash + 1);
}

const isPackage = (to: string) => !to.startsWith('../') && !/\.(ts|mts|mjs|js)$/.test(to);
const show = (list: Arrow[]) => list.map((a) => `  src/${a.from} → ${isPackage(a.to) ? a.to : `src/${a.to}`}`).join('\n');

/** Fails listing every arrow found, so that one run names all of them. */
function none(found: Arrow[], what: string): void {
  if (found.length) expect.fail(`${what}:\n${show(found)}`);
}

/**
 * The shortest circle of top-level entries through each entry that is on one (breadth-first),
 * each circle once, written from its first member in sort order: `a → b → a`.
 */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const found = new Map<string, string[]>();
  for (const start of [...edges.keys()].sort()) {
    const parent = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length && last === undefined) {
      const v = queue.shift()!;
      for (const w of [...(edges.get(v) ?? [])].sort()) {
        if (w === start) {
          last = v;
          break;
        }
        if (!parent.has(w)) {
          parent.set(w, v);
          queue.push(w);
        }
      }
    }
    if (last === undefined) continue;
    const circle = [last];
    while (circle[0] !== start) circle.unshift(parent.get(circle[0])!);
    const first = circle.indexOf([...circle].sort()[0]);
    const rotated = [...circle.slice(first), ...circle.slice(0, first)];
    found.set(rotated.join(' '), rotated);
  }
  return [...found.values()];
}

describe('architecture: the import rules (STYLE.md, the one-way flow and #14)', () => {
  const all = arrows();
  const inSrc = all.filter((a) => !isPackage(a.to));
  const wrong = (rule: (a: Arrow) => boolean) => all.filter(rule);

  it('reads the imports of every source file', () => {
    expect(sourceFiles(SRC).length).to.be.greaterThan(100);
    expect(inSrc.some((a) => a.from === 'config/load.ts')).to.equal(true);
  });

  it('config/ imports nothing from http/, engine/ or dispatch/: the loader sits below the floors it configures', () => {
    const found = wrong((a) => a.from.startsWith('config/') && /^(http|engine|dispatch)\//.test(a.to));
    none(found, 'config/ imports from a floor above it');
  });

  it('senders/ imports nothing from config/, http/, engine/ or dispatch/: the loader and the listener both read its descriptors', () => {
    const found = wrong((a) => a.from.startsWith('senders/') && /^(config|http|engine|dispatch)\//.test(a.to));
    none(found, 'senders/ imports from a floor above it');
  });

  it('dispatch/ imports nothing from engine/: what they exchange sits below both', () => {
    const found = wrong((a) => a.from.startsWith('dispatch/') && a.to.startsWith('engine/'));
    none(found, 'dispatch/ imports from engine/');
  });

  it('engine/ never imports koa: the mapping step is one pure function', () => {
    const found = wrong((a) => a.from.startsWith('engine/') && /^(koa|@koa\/|koa-)/.test(a.to));
    none(found, 'engine/ imports koa');
  });

  it('no two top-level folders (or root files) import each other, directly or round a circle', () => {
    const edges = new Map<string, Set<string>>();
    for (const a of inSrc) {
      const [x, y] = [floor(a.from), floor(a.to)];
      if (x === y) continue;
      if (!edges.has(x)) edges.set(x, new Set());
      edges.get(x)!.add(y);
    }
    const circles = cycles(edges);
    const named = (circle: string[]) => [...circle, circle[0]].join(' → ');
    const report = circles.map((circle) => {
      const steps = circle.map((x, i) => {
        const y = circle[(i + 1) % circle.length];
        const made = inSrc.filter((a) => floor(a.from) === x && floor(a.to) === y);
        return `    ${x} → ${y}: ${made.map((a) => `src/${a.from} → src/${a.to}`).join(', ')}`;
      });
      return `  ${named(circle)}\n${steps.join('\n')}`;
    });
    if (report.length) expect.fail(`import cycles between top-level entries of src/:\n${report.join('\n')}`);
  });
});

/** Lines of `text`, and how many are comment lines (`//`, or inside a block comment). */
function commentLines(text: string): { lines: number; comments: number } {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let comments = 0;
  let inBlock = false;
  for (const raw of lines) {
    const line = raw.trim();
    if (inBlock || line.startsWith('//') || line.startsWith('/*')) comments++;
    if (inBlock) inBlock = !line.includes('*/');
    else if (line.startsWith('/*')) inBlock = !line.includes('*/');
  }
  return { lines: lines.length, comments };
}

describe('architecture: small files whose comments say why (STYLE.md #11, #12)', () => {
  const files = sourceFiles(SRC).map((file) => ({ file: relative(SRC, file), text: readFileSync(file, 'utf8') }));

  it('no source file is over 300 lines', () => {
    const long = files.map((f) => ({ file: f.file, lines: commentLines(f.text).lines })).filter((f) => f.lines > 300);
    expect(long, 'split these files by concern').to.deep.equal([]);
  });

  it('comments are at most 15 % of src/ and tell no history or timings', () => {
    const counts = files.map((f) => commentLines(f.text));
    const lines = counts.reduce((n, c) => n + c.lines, 0);
    const comments = counts.reduce((n, c) => n + c.comments, 0);
    expect(comments / lines, `${comments} comment lines of ${lines}`).to.be.at.most(0.15);
    const history = files.flatMap((f) => f.text.split('\n').map((line, i) => ({ at: `src/${f.file}:${i + 1}`, line })))
      .filter(({ line }) => /^\s*(\/\/|\*|\/\*)/.test(line) && /\bissue \d+|\bused to\b|\bmeasured\b|µs/i.test(line))
      .map(({ at }) => at);
    expect(history, 'say why (with a citation), not what happened or what it cost').to.deep.equal([]);
  });
});
