import { hasPlainPrototype, isPrototypeKey } from './prototype-keys.js';
import { startRender, textOf } from './render-budget.js';

/*
 * A Handlebars template call sets its runtime up anew every time (handlebars/runtime.js
 * `ret._setup`: every registered helper wrapped in a fresh closure, the prototype-access
 * tables made again), about half of a short template's ~3 µs — and a forEach renders its
 * template once per item. Most mapping templates are flat: text and mustaches naming a path
 * (`Alert {{index}}: {{title}} on {{payload.host}}`). Those are rendered here, directly:
 * each mustache's value looked up as the compiled template looks it up (`lookupProperty` of
 * handlebars/runtime.js with hookrelay's runtime options: an own property, or nothing) and
 * made text by the same textOf(), under the same render budget. A value that did not come
 * from JSON (a function, a Date) is SLOW: the template then renders through Handlebars, as
 * every template with a block, a helper call, `this`, `../` or `@data` always does.
 * spec/unit/engine/handlebars-flat.spec.ts holds the two to the same output.
 */

/** "Render this one through Handlebars": the template is flat, this context is not plain. */
export const SLOW = Symbol('hookrelay.handlebars.slow');

/** A flat template's parts: text as it is, or the path of a mustache's value. */
export type Part = string | readonly string[];

/** A direct render of a flat template: its text, or {@link SLOW}. */
export type FlatRender = (context: unknown) => string | typeof SLOW;

/**
 * The parts of the template (its AST after handlebars.ts routed every mustache through
 * `textHelper`); undefined when it is not flat.
 */
export function flatParts(ast: hbs.AST.Program, textHelper: string): Part[] | undefined {
  const parts: Part[] = [];
  for (const statement of ast.body) {
    if (statement.type === 'ContentStatement') parts.push((statement as hbs.AST.ContentStatement).value);
    else if (statement.type === 'MustacheStatement') {
      const path = valuePath(statement as hbs.AST.MustacheStatement, textHelper);
      if (path === undefined) return undefined;
      parts.push(path);
    } else if (statement.type !== 'CommentStatement') return undefined;
  }
  return parts;
}

/** `{{ a.b_c }}`, where it starts: a mustache of a plain path, of the names the scan below takes. */
const PATH_MUSTACHE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}/y;

/** Names Handlebars reads as something else than a path segment, or refuses as one (`a.this`, `a.true`). */
const NOT_A_NAME = new Set(['true', 'false', 'null', 'undefined', 'this']);

/**
 * The parts of a flat template read from its source, without Handlebars' parser (a generated
 * LALR parser: ~1 ms a template while it is cold, most of a start with many mappings): text
 * and mustaches each naming a plain path of ASCII names. Undefined for anything else — a
 * backslash, a block, a comment, whitespace control, a triple-stash, a literal, `this`, `..`,
 * a bracket or a prototype key — which handlebars.ts parses with Handlebars as before. What it
 * reads, Handlebars parses to the same parts (spec/unit/engine/handlebars-flat.spec.ts holds
 * the two to it): every such source is a valid template, so nothing is left to fail at load.
 */
export function scanFlat(source: string): Part[] | undefined {
  if (source.includes('\\')) return undefined;
  const parts: Part[] = [];
  let pos = 0;
  for (;;) {
    const open = source.indexOf('{{', pos);
    if (open < 0) {
      if (pos < source.length) parts.push(source.slice(pos));
      return parts;
    }
    if (open > pos) parts.push(source.slice(pos, open));
    PATH_MUSTACHE.lastIndex = open;
    const m = PATH_MUSTACHE.exec(source);
    // `}}}` closes a triple-stash, and `{{else…` opens an inverse section, in Handlebars' lexer.
    if (m === null || source[PATH_MUSTACHE.lastIndex] === '}' || m[1]!.startsWith('else')) return undefined;
    const path = m[1]!.split('.');
    if (path.some((p) => NOT_A_NAME.has(p) || isPrototypeKey(p))) return undefined;
    parts.push(path);
    pos = PATH_MUSTACHE.lastIndex;
  }
}

/** The direct render of a flat template's parts. */
export function flatRender(parts: readonly Part[]): FlatRender {
  return (context) => {
    startRender();
    let text = '';
    for (const part of parts) {
      if (typeof part === 'string') {
        text += part;
        continue;
      }
      const value = resolve(context, part);
      if (value === SLOW) return SLOW;
      text += textOf(value);
    }
    return text;
  };
}

/** `{{textHelper a.b}}` with a plain path (no `this`, `../` or `@data`, which handlebars.ts also makes of a prototype key): its parts. */
function valuePath(mustache: hbs.AST.MustacheStatement, textHelper: string): readonly string[] | undefined {
  const helper = mustache.path as hbs.AST.PathExpression;
  if (helper.type !== 'PathExpression' || helper.original !== textHelper || mustache.params.length !== 1 || mustache.hash !== undefined) return undefined;
  const value = mustache.params[0] as hbs.AST.PathExpression;
  if (value.type !== 'PathExpression' || value.data || value.depth !== 0 || value.parts.length === 0) return undefined;
  return value.parts.every((p) => typeof p === 'string') ? [...value.parts] : undefined;
}

/**
 * A mustache's value, as the compiled template finds it (`strict: false`): each segment from
 * the one before unless that is null or undefined, through `lookupProperty` — a result that
 * is null or undefined as it is, an own property's value, anything inherited nothing (the
 * runtime options allow no prototype access).
 */
function resolve(context: unknown, parts: readonly string[]): unknown {
  let value = context;
  for (const part of parts) {
    if (value === null || value === undefined) return value;
    if (typeof value === 'object' && !isPlain(value)) return SLOW;
    const found = (value as Record<string, unknown>)[part];
    if (found === null || found === undefined) {
      value = found;
      continue;
    }
    if (!Object.hasOwn(value as object, part)) {
      value = undefined;
      continue;
    }
    if (typeof found === 'function') return SLOW;
    value = found;
  }
  return value !== null && typeof value === 'object' && !isPlain(value) ? SLOW : value;
}

/** An array or an object of JSON's kind. */
function isPlain(value: object): boolean {
  return Array.isArray(value) || hasPlainPrototype(value);
}
