import Handlebars from 'handlebars';
import { built, renderBudget, textOf, type RenderBudget } from './render-budget.js';
import { isPrototypeKey, withoutPrototypeKeys } from './prototype-keys.js';

/** A compiled template: context in, text out. Throws only a RenderBudgetError, with the position where it tripped. */
export type RenderText = (context: Record<string, unknown>) => string;

const TEXT_HELPER = '__hookrelay_text';

// The render's budget rides in Handlebars' data frame under a symbol no template path can name.
const BUDGET = Symbol('hookrelay.renderBudget');
interface Data {
  [BUDGET]?: RenderBudget;
  _parent?: Data;
}

function budgetOf(data: Data | undefined): RenderBudget {
  while (data && data[BUDGET] === undefined) data = data._parent;
  return data![BUDGET]!;
}

// An isolated environment: nothing registered globally on Handlebars changes these templates.
const env = Handlebars.create();
env.unregisterHelper('log'); // it would write payload content to stdout
env.registerHelper(TEXT_HELPER, (value: unknown, options: Handlebars.HelperOptions) => {
  try {
    return textOf(budgetOf(options.data), value);
  } catch (err) {
    throw located(err, options);
  }
});
env.registerHelper('lookup', safeLookup);
const builtinEach = env.helpers.each!;
env.registerHelper('each', function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
  const budget = budgetOf(options.data);
  const body = options.fn;
  const fn = (item: unknown, opts?: Handlebars.RuntimeOptions) => built(budget, body(item, opts));
  // `{{#array}}…{{/array}}` comes here too (Handlebars' blockHelperMissing).
  try {
    return builtinEach.call(this, withoutPrototypeKeys(context), { ...options, fn: fn as Handlebars.TemplateDelegate });
  } catch (err) {
    // A budget trip between items names the block: Handlebars hands every helper call its position (`options.loc`).
    throw located(err, options);
  }
});

/** `err` with the innermost position it passed through: Handlebars' own `lineNumber`/`column` (column from 0). */
function located(err: unknown, options: Handlebars.HelperOptions): unknown {
  const at = (options as { loc?: hbs.AST.SourceLocation }).loc?.start;
  if (at !== undefined && err !== null && typeof err === 'object' && (err as { lineNumber?: unknown }).lineNumber === undefined) {
    const { line, column } = at;
    try {
      Object.defineProperties(err, { lineNumber: { value: line }, column: { value: column } });
    } catch {
      // A frozen error keeps no position.
    }
  }
  return err;
}

function budgeted(template: Handlebars.TemplateDelegate, context: unknown): string {
  // Explicit `false` keeps Handlebars from warning on the console per inherited name (proto-access.js).
  return template(context, { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false, data: { root: context, [BUDGET]: renderBudget() } });
}

const COMPILE_OPTIONS = {
  noEscape: true,
  // Unknown helpers are errors at load, not a 500 later; so are Handlebars' hooks for a missing helper.
  knownHelpersOnly: true,
  knownHelpers: { [TEXT_HELPER]: true, log: false, helperMissing: false, blockHelperMissing: false },
  strict: false,
};

// Handlebars' first stage (AST to opcodes) is where it finds unknown helpers, partials and
// decorators; its code generation is left to the first render. Not in its typings.
const { Compiler } = env as unknown as { Compiler: new () => { compile(ast: hbs.AST.Program, options: object): unknown } };

function safeLookup(target: unknown, key: unknown): unknown {
  if (target === null || target === undefined || isPrototypeKey(key)) return undefined;
  if (typeof key !== 'string' && typeof key !== 'number') return undefined;
  return Object.prototype.hasOwnProperty.call(target, key) ? (target as Record<string | number, unknown>)[key] : undefined;
}

/** Compiles a template at load (a one-line Error on a syntax error, an unknown helper, a partial, a decorator or a block helper misused), CONTRACT.md §6. */
export function compileHandlebars(source: string): RenderText {
  const ast = parseTemplate(source);
  try {
    // A copy: the stage writes into its options' knownHelpers.
    new Compiler().compile(ast, { ...COMPILE_OPTIONS });
  } catch (err) {
    throw new Error(oneLine(err));
  }
  const template = env.compile(ast, COMPILE_OPTIONS);
  return (context) => budgeted(template, context);
}

function parseTemplate(source: string): hbs.AST.Program {
  let ast: hbs.AST.Program;
  try {
    ast = env.parse(rewriteIndexSyntax(source));
  } catch (err) {
    throw new Error(withBraceHint(oneLine(err)));
  }
  rewriteProgram(ast);
  return ast;
}

/** A JSON template's braces run into its mustaches (`{"a":{{x}}}`), read as a triple-stash: say how to write it (CONTRACT.md §12). */
function withBraceHint(message: string): string {
  if (!/CLOSE_UNESCAPED|CLOSE_RAW_BLOCK|OPEN_RAW_BLOCK|OPEN_END_RAW_BLOCK/.test(message)) return message;
  return `${message} (Handlebars reads {{{ and }}} as a triple-stash: in a JSON template put a space between a mustache and a brace of the JSON, e.g. {"pong": {{hook_id}} })`;
}

function oneLine(err: unknown): string {
  const lines = (err instanceof Error ? err.message : String(err)).split('\n').map((l) => l.trim()).filter(Boolean);
  if (lines.length <= 1) return lines[0] ?? 'invalid template';
  const got = /got '([^']*)'$/.exec(lines[lines.length - 1]!);
  if (got && lines.length >= 3) return `${lines[0]} unexpected ${got[1]} after "${lines[1]}"`;
  return `${lines[0]} ${lines[lines.length - 1]}`;
}

// What a Handlebars ID may end with (its lexer's ID class), or `]` closing a segment.
const ID_END = /[^\s!"#%&'()*+,./;<=>@[\\^`{|}~]/;

/** Rewrites `a[0].b` to `a.[0].b` inside mustaches, leaving text, comments, escaped mustaches and string literals alone. */
export function rewriteIndexSyntax(source: string): string {
  if (!source.includes('[')) return source;
  let out = '';
  let pos = 0;
  for (;;) {
    const open = source.indexOf('{{', pos);
    if (open < 0) return out + source.slice(pos);
    if (open > 0 && source[open - 1] === '\\' && source[open - 2] !== '\\') {
      out += source.slice(pos, open + 2); // `\{{` is literal text
      pos = open + 2;
      continue;
    }
    out += source.slice(pos, open);
    if (source.startsWith('{{!', open)) {
      const closer = source.startsWith('{{!--', open) ? '--}}' : '}}';
      const end = source.indexOf(closer, open + 3);
      const stop = end < 0 ? source.length : end + closer.length;
      out += source.slice(open, stop);
      pos = stop;
      continue;
    }
    const mustache = rewriteMustache(source, open);
    out += mustache.text;
    pos = mustache.end;
  }
}

function rewriteMustache(source: string, open: number): { text: string; end: number } {
  let i = open + 2;
  let text = '{{';
  while (i < source.length) {
    const ch = source[i]!;
    if (ch === '}' && source[i + 1] === '}') break;
    let stop = i + 1;
    if (ch === '"' || ch === "'") {
      const end = source.indexOf(ch, i + 1);
      stop = end < 0 ? source.length : end + 1;
    } else if (ch === '[') {
      const prev = source[i - 1] ?? '';
      if (prev === ']' || ID_END.test(prev)) text += '.';
      const end = source.indexOf(']', i + 1); // a literal segment runs to the next `]`
      stop = end < 0 ? source.length : end + 1;
    }
    text += source.slice(i, stop);
    i = stop;
  }
  return { text, end: i };
}


type Expression = hbs.AST.Expression;

function path(parts: string, data: boolean, loc: hbs.AST.SourceLocation): hbs.AST.PathExpression {
  return { type: 'PathExpression', data, depth: 0, parts: [parts], original: data ? `@${parts}` : parts, loc };
}

function rewriteProgram(program: hbs.AST.Program | undefined): void {
  if (!program) return;
  for (const statement of program.body) rewriteStatement(statement);
}

function rewriteStatement(statement: hbs.AST.Statement): void {
  switch (statement.type) {
    case 'MustacheStatement':
      routeThroughTextHelper(statement as hbs.AST.MustacheStatement);
      return;
    case 'BlockStatement': {
      const block = statement as hbs.AST.BlockStatement;
      const helper = blockHelperOf(block.path);
      if (helper !== undefined && block.params.length !== 1) throw new Handlebars.Exception(`#${helper} requires exactly one argument`, block);
      if (!sanitizeCall(block)) block.path = sanitize(block.path) as hbs.AST.PathExpression;
      rewriteProgram(block.program);
      rewriteProgram(block.inverse);
      return;
    }
    case 'ContentStatement':
    case 'CommentStatement':
      return;
    default:
      throw new Error(`${statement.type} is not supported in hookrelay templates (line ${statement.loc.start.line})`);
  }
}

function routeThroughTextHelper(mustache: hbs.AST.MustacheStatement): void {
  const { path: callee, hash, loc } = mustache;
  if (mustache.params.length > 0 || hash !== undefined) notABlockHelper(mustache);
  const value = sanitizeCall(mustache)
    ? ({ type: 'SubExpression', path: callee, params: mustache.params, hash, loc } as unknown as Expression)
    : sanitize(callee as Expression);
  mustache.path = path(TEXT_HELPER, false, loc);
  mustache.params = [value];
  (mustache as { hash?: hbs.AST.Hash }).hash = undefined;
}

/** Sanitises a call's arguments; false when it has none (then it is a plain path). */
function sanitizeCall(call: { params: Expression[]; hash?: hbs.AST.Hash }): boolean {
  if (call.params.length === 0 && call.hash === undefined) return false;
  call.params = call.params.map(sanitize);
  for (const pair of call.hash?.pairs ?? []) pair.value = sanitize(pair.value);
  return true;
}

function sanitize(expression: Expression): Expression {
  if (expression.type === 'PathExpression') {
    const p = expression as hbs.AST.PathExpression;
    return p.parts.some(isPrototypeKey) ? path('hookrelayNever', true, p.loc) : p;
  }
  if (expression.type === 'SubExpression') {
    notABlockHelper(expression as hbs.AST.SubExpression);
    sanitizeCall(expression as hbs.AST.SubExpression);
  }
  return expression;
}

// Handlebars' block helpers: called with another number of arguments, or not as a block (no
// `options.fn`), they throw at every render that reaches them, so the load says so for every branch.
const BLOCK_HELPERS = new Set(['if', 'unless', 'with', 'each']);

function blockHelperOf(callee: Expression): string | undefined {
  if (callee.type !== 'PathExpression') return undefined;
  const name = (callee as hbs.AST.PathExpression).parts[0]!;
  return Handlebars.AST.helpers.simpleId(callee as hbs.AST.PathExpression) && BLOCK_HELPERS.has(name) ? name : undefined;
}

function notABlockHelper(call: hbs.AST.MustacheStatement | hbs.AST.SubExpression): void {
  const helper = blockHelperOf(call.path);
  if (helper !== undefined) throw new Handlebars.Exception(`#${helper} is a block helper: write {{#${helper} …}}…{{/${helper}}}, not {{${helper} …}} or (${helper} …)`, call);
}
