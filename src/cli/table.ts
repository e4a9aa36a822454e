import { printable } from '../printable.js';

/** What a cell may be painted on a terminal. */
export type Paint = 'green' | 'yellow' | 'red' | 'dim' | 'bold';
const CODES: Record<Paint, [number, number]> = { green: [32, 39], yellow: [33, 39], red: [31, 39], dim: [2, 22], bold: [1, 22] };

/** A cell: its text (from outside: escaped by {@link printable}), painted on a terminal. */
export type Cell = string | { text: string; paint?: Paint };

/**
 * Colour only on a terminal, and not with `NO_COLOR` set to anything (https://no-color.org) nor
 * `TERM=dumb`: piped output, the one scripts read, never holds escape codes (as git and kubectl do).
 */
export function colourOn(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb';
}

/** `text` in `paint`'s escape codes when `on`. */
export function painted(text: string, paint: Paint | undefined, on: boolean): string {
  if (!on || paint === undefined) return text;
  const [open, close] = CODES[paint];
  return `\x1b[${open}m${text}\x1b[${close}m`;
}

/**
 * Rows under column headers, each column as wide as its widest cell so far (a followed list
 * grows them), the last one unpadded; the headers come with the first rows printed.
 */
export function createTable(headers: readonly string[], write: (text: string) => void = (t) => process.stdout.write(t), colour = colourOn()) {
  const widths = headers.map((h) => h.length);
  let headed = false;
  const line = (cells: { text: string; paint?: Paint }[]) =>
    `${cells.map((c, i) => painted(i === cells.length - 1 ? c.text : c.text.padEnd(widths[i]!), c.paint, colour)).join('  ').trimEnd()}\n`;
  return {
    print(rows: readonly Cell[][]): void {
      if (rows.length === 0) return;
      const cells = rows.map((row) => row.map((c) => (typeof c === 'string' ? { text: printable(c) } : { ...c, text: printable(c.text) })));
      for (const row of cells) row.forEach((c, i) => (widths[i] = Math.max(widths[i]!, c.text.length)));
      let out = '';
      if (!headed) out += line(headers.map((text) => ({ text, paint: 'bold' as const })));
      headed = true;
      for (const row of cells) out += line(row);
      write(out);
    },
  };
}

/** What a listing says when it has no rows, on stderr (stdout stays empty for a script), as kubectl's "No resources found". */
export function noneFound(what: string): void {
  process.stderr.write(`${what}\n`);
}
