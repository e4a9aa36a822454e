import { hasPlainPrototype } from './prototype-keys.js';
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
type Part = string | readonly string[];

/**
 * The template (its AST after handlebars.ts routed every mustache through `textHelper`) as a
 * direct render giving its text or {@link SLOW}; undefined when it is not flat.
 */
export function flatRender(ast: hbs.AST.Program, textHelper: string): ((context: unknown) => string | typeof SLOW) | undefined {
  const parts: Part[] = [];
  for (const statement of ast.body) {
    if (statement.type === 'ContentStatement') parts.push((statement as hbs.AST.ContentStatement).value);
    else if (statement.type === 'MustacheStatement') {
      const path = valuePath(statement as hbs.AST.MustacheStatement, textHelper);
      if (path === undefined) return undefined;
      parts.push(path);
    } else if (statement.type !== 'CommentStatement') return undefined;
  }
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
