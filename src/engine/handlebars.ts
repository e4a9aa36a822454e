import Handlebars from 'handlebars';
import { built, renderBudget, textOf, type RenderBudget } from './render-budget.js';
import { isPrototypeKey, withoutPrototypeKeys } from './prototype-keys.js';

/** A compiled template: context in, text out. Throws only on a helper misuse at run time. */
export type RenderText = (context: Record<string, unknown>) => string;

/** Name of the helper every mustache is routed through; no payload key can shadow a helper. */
const TEXT_HELPER = '__hookrelay_text';

// The render's budget rides in Handlebars' data frame under a symbol: no template path can
// name it, and helpers reach it through `options.data` (createFrame keeps `_parent`).
const BUDGET = Symbol('hookrelay.renderBudget');
interface Data {
  [BUDGET]?: RenderBudget;
  _parent?: Data;
}

function budgetOf(data: Data | undefined): RenderBudget {
  while (data && data[BUDGET] === undefined) data = data._parent;
  return data![BUDGET]!;
}

// One isolated environment: nothing a user (or another library) registers globally on
// Handlebars can change how hookrelay templates render.
const env = Handlebars.create();
// `{{log x}}` would write payload content to stdout, which `hookrelay test` reserves for JSON.
env.unregisterHelper('log');
env.registerHelper(TEXT_HELPER, (value: unknown, options: Handlebars.HelperOptions) => textOf(budgetOf(options.data), value));
env.registerHelper('lookup', safeLookup);
const builtinEach = env.helpers.each!;
env.registerHelper('each', function (this: unknown, context: unknown, options: Handlebars.HelperOptions) {
  // Every iteration is a step, and what it renders counts as built text.
  const budget = budgetOf(options.data);
  const body = options.fn;
  const fn = (item: unknown, opts?: Handlebars.RuntimeOptions) => built(budget, body(item, opts));
  // `{{#each obj}}` walks own keys, which for a parsed payload may include `__proto__`.
  // (`{{#array}}…{{/array}}` iterates through this helper too: Handlebars' blockHelperMissing.)
  return builtinEach.call(this, withoutPrototypeKeys(context), { ...options, fn: fn as Handlebars.TemplateDelegate });
});

/** Runs one render with a budget of its own. */
function budgeted(template: Handlebars.TemplateDelegate, context: unknown): string {
  // `root` given, so Handlebars uses this frame as the top one (runtime.js initData).
  return template(context, { ...RUNTIME_OPTIONS, data: { root: context, [BUDGET]: renderBudget() } });
}

const COMPILE_OPTIONS = {
  noEscape: true,
  // Unknown helpers become compile errors (a config error at load) instead of a 500 later,
  // and plain mustaches compile to direct property lookups.
  knownHelpersOnly: true,
  knownHelpers: { [TEXT_HELPER]: true, log: false },
  strict: false,
};

// Passing explicit `false` defaults stops Handlebars from logging a warning to the console
// each time a template names an inherited property (proto-access.js `checkWhiteList`).
const RUNTIME_OPTIONS: Handlebars.RuntimeOptions = {
  allowProtoPropertiesByDefault: false,
  allowProtoMethodsByDefault: false,
};

/** Own properties only, and never a prototype key: the `lookup` helper of hookrelay templates. */
function safeLookup(target: unknown, key: unknown): unknown {
  if (target === null || target === undefined || isPrototypeKey(key)) return undefined;
  if (typeof key !== 'string' && typeof key !== 'number') return undefined;
  return Object.prototype.hasOwnProperty.call(target, key) ? (target as Record<string | number, unknown>)[key] : undefined;
}

/**
 * Compiles a Handlebars template once (at load). Throws an Error with a one-line message on
 * a syntax error, an unknown helper, a partial or a decorator.
 *
 * - `a[0].b` works: rewritten to Handlebars' own `a.[0].b` inside mustaches only.
 * - Objects and arrays render as JSON, null/undefined as '' (every mustache goes through one helper).
 * - `__proto__`, `prototype` and `constructor` never resolve, in any path segment or via `lookup`.
 * - No HTML escaping.
 * - A render has a budget of work (render-budget.ts): past it, it throws RenderBudgetError.
 */
export function compileHandlebars(source: string): RenderText {
  const template = env.compile(parseTemplate(source), COMPILE_OPTIONS);
  try {
    // Handlebars compiles lazily on the first call; force it now so errors surface at load.
    budgeted(template, {});
  } catch (err) {
    throw new Error(oneLine(err));
  }
  return (context) => budgeted(template, context);
}

/** The template's AST, as hookrelay renders it: `a[0]` read as `a.[0]`, every mustache through the text helper (see below). */
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

/**
 * A JSON template's braces run into its mustaches (`{"a":{{x}}}`): Handlebars reads `{{{` and
 * `}}}` as a triple-stash, and its message says only which token it did not expect. Say how to
 * write it (CONTRACT.md §12).
 */
function withBraceHint(message: string): string {
  if (!/CLOSE_UNESCAPED|CLOSE_RAW_BLOCK|OPEN_RAW_BLOCK|OPEN_END_RAW_BLOCK/.test(message)) return message;
  return `${message} (Handlebars reads {{{ and }}} as a triple-stash: in a JSON template put a space between a mustache and a brace of the JSON, e.g. {"pong": {{hook_id}} })`;
}

/** Handlebars error messages span lines (a caret diagram); `hookrelay check` prints one per problem. */
function oneLine(err: unknown): string {
  const lines = (err instanceof Error ? err.message : String(err)).split('\n').map((l) => l.trim()).filter(Boolean);
  if (lines.length <= 1) return lines[0] ?? 'invalid template';
  // "Parse error on line 1:" / source excerpt / caret / "Expecting 'A', 'B', …, got 'EOF'"
  const got = /got '([^']*)'$/.exec(lines[lines.length - 1]!);
  if (got && lines.length >= 3) return `${lines[0]} unexpected ${got[1]} after "${lines[1]}"`;
  return `${lines[0]} ${lines[lines.length - 1]}`;
}

// Characters a Handlebars ID may end with (the lexer's ID class excludes whitespace and
// !"#%&'()*+,./;<=>@[\]^`{|}~), plus `]` closing a previous segment: `a[0][1]`.
const ID_END = /[^\s!"#%&'()*+,./;<=>@[\\^`{|}~]/;

/**
 * Rewrites `a[0].b` to `a.[0].b` inside mustaches, leaving text, comments, escaped
 * mustaches and string literals alone. Handlebars itself rejects `a[0]` as a parse error.
 */
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

/** One mustache starting at `open`, with `.` inserted before index brackets, and where it ends. */
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

// --- AST rewrite -------------------------------------------------------------------------

type Expression = hbs.AST.Expression;

/** A path that never resolves: a data variable (`@…`) hookrelay never sets. */
function unresolvable(loc: hbs.AST.SourceLocation): hbs.AST.PathExpression {
  return { type: 'PathExpression', data: true, depth: 0, parts: ['hookrelayNever'], original: '@hookrelayNever', loc };
}

function textHelperPath(loc: hbs.AST.SourceLocation): hbs.AST.PathExpression {
  return { type: 'PathExpression', data: false, depth: 0, parts: [TEXT_HELPER], original: TEXT_HELPER, loc };
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
      const isCall = block.params.length > 0 || block.hash !== undefined;
      // `{{#each x}}`: the path names a helper; `{{#x}}`: the path is data and must be safe.
      if (!isCall) block.path = sanitize(block.path) as hbs.AST.PathExpression;
      block.params = block.params.map(sanitize);
      sanitizeHash(block.hash);
      rewriteProgram(block.program);
      rewriteProgram(block.inverse);
      return;
    }
    case 'ContentStatement':
    case 'CommentStatement':
      return;
    default:
      // Partials would need registered templates, decorators run code: neither is offered.
      throw new Error(`${statement.type} is not supported in hookrelay templates (line ${statement.loc.start.line})`);
  }
}

/** `{{x}}` → `{{__hookrelay_text x}}`, `{{helper a}}` → `{{__hookrelay_text (helper a)}}`. */
function routeThroughTextHelper(mustache: hbs.AST.MustacheStatement): void {
  const isCall = mustache.params.length > 0 || mustache.hash !== undefined;
  let value: Expression;
  if (isCall) {
    mustache.params = mustache.params.map(sanitize);
    sanitizeHash(mustache.hash);
    const call = {
      type: 'SubExpression',
      path: mustache.path as hbs.AST.PathExpression,
      params: mustache.params,
      hash: mustache.hash,
      loc: mustache.loc,
    };
    value = call as unknown as Expression;
  } else {
    value = sanitize(mustache.path as Expression);
  }
  mustache.path = textHelperPath(mustache.loc);
  mustache.params = [value];
  (mustache as { hash?: hbs.AST.Hash }).hash = undefined;
}

function sanitize(expression: Expression): Expression {
  if (expression.type === 'PathExpression') {
    const path = expression as hbs.AST.PathExpression;
    return path.parts.some(isPrototypeKey) ? unresolvable(path.loc) : path;
  }
  if (expression.type === 'SubExpression') {
    const sub = expression as hbs.AST.SubExpression;
    sub.params = sub.params.map(sanitize);
    sanitizeHash(sub.hash);
  }
  return expression;
}

function sanitizeHash(hash: hbs.AST.Hash | undefined): void {
  if (!hash) return;
  for (const pair of hash.pairs) pair.value = sanitize(pair.value);
}
