import { isMap, parseDocument, YAMLMap, Document, type Node, type Pair } from 'yaml';

/** yaml's `toString()` re-prints the whole document, so only the changed pairs are printed anew and spliced in. */
export function spliceHooksKeys(text: string, edited: Document, keys: readonly string[]): string {
  const orig = parseDocument(text);
  const top = orig.contents;
  if (!isMap(top)) return edited.toString(FORMAT);
  const hooksPair = top.items.find((p) => keyName(p) === 'hooks');
  if (!hooksPair) return `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${render(edited, keys, '  ', 'hooks')}`;
  const hooks = hooksPair.value as Node | null;
  if (hooks !== null && (!isMap(hooks) || hooks.flow)) return edited.toString(FORMAT);

  const edits: { start: number; end: number; insert: string }[] = [];
  const indent = ' '.repeat(hooks && hooks.items.length ? column(text, (hooks.items[0]!.key as Node).range![0]) : column(text, (hooksPair.key as Node).range![0]) + 2);
  const missing: string[] = [];
  for (const key of keys) {
    const pair = hooks?.items.find((p) => keyName(p) === key);
    if (!pair) {
      missing.push(key);
      continue;
    }
    const keyNode = pair.key as Node;
    const valueNode = pair.value as Node | null;
    const start = text.lastIndexOf('\n', keyNode.range![0] - 1) + 1;
    edits.push({ start, end: lineEnd(text, valueNode?.range ? valueNode.range[1] : keyNode.range![1]), insert: render(edited, [key], indent) });
  }
  if (missing.length) {
    // After the last key of `hooks` (before its trailing blank lines and comments), or after `hooks:` itself.
    const at = lineEnd(text, hooks?.range ? hooks.range[1] : (hooksPair.key as Node).range![1]);
    edits.push({ start: at, end: at, insert: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${render(edited, missing, indent)}` });
  }
  let out = text;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.insert + out.slice(e.end);
  return out;
}

// One line per value however long; `[a, b]` as the user writes it.
const FORMAT = { lineWidth: 0, flowCollectionPadding: false, indent: 2 } as const;

function render(edited: Document, keys: readonly string[], indent: string, wrap?: string): string {
  const part = new Document(new YAMLMap());
  for (const key of keys) part.set(key, edited.getIn(['hooks', key], true));
  const lines = part.toString(FORMAT).split('\n');
  const body = lines.map((l) => (l ? indent + l : l)).join('\n');
  return wrap ? `${wrap}:\n${body}` : body;
}

function keyName(p: Pair): unknown {
  const k = p.key as { value?: unknown } | null;
  return k && typeof k === 'object' && 'value' in k ? k.value : k;
}

function column(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** `offset`, or past the end of its line when it is inside one (a flow value, a scalar with a comment after it). */
function lineEnd(text: string, offset: number): number {
  if (offset > 0 && text[offset - 1] === '\n') return offset;
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl + 1;
}
