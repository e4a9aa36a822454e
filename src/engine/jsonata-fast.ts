import type jsonata from 'jsonata';
import { hasPlainPrototype } from './prototype-keys.js';

/*
 * JSONata evaluates asynchronously, a promise per node of the expression (jsonata 2), and the
 * guards run after every step (jsonata-guard.ts): the bench's
 * `"Order " & order.id & … & $string($sum(order.items.price))` costs ~35 µs an evaluation
 * and its garbage. Most mapping fields are that simple — paths of names, text and number
 * literals, `&`, `$string`, `$sum`, `$count` — and for those this evaluates the expression
 * synchronously, following jsonata.js 2.2 step by step (evaluatePath, evaluateStep, lookup,
 * the unwrapping of singleton sequences, fn.string). It answers only the plain cases and says
 * SLOW for everything else: a value that did not come from JSON (a function, a Date), a
 * non-scalar where text is built, an argument `$sum` would refuse, a string or sequence near
 * a guard's limit. Then the expression runs on JSONata as before, so every error, and every
 * guard trip, is still JSONata's own. spec/unit/engine/jsonata-fast.spec.ts holds the two to
 * the same results.
 */

/** "Evaluate this one on JSONata": the expression is simple, this input is not. */
export const SLOW = Symbol('hookrelay.jsonata.slow');

/** The guards' limits the plain cases stay well inside (jsonata.ts JsonataLimits). */
export interface FastLimits {
  maxStringLength: number;
  maxBuiltLength: number;
  maxSequenceLength: number;
}

/** Characters of strings one evaluation produced (the step check's count, jsonata-guard.ts), and the limits. */
interface Run {
  built: number;
  readonly limits: FastLimits;
}

type Node = (input: unknown, run: Run) => unknown;

/**
 * The expression as a synchronous function giving its value or {@link SLOW}, or undefined
 * when it is not in the subset. `ast`: the inspected AST (a name spelling a prototype key is
 * a symbol there, jsonata-guard.ts, and never resolves).
 */
export function compileFast(ast: jsonata.ExprNode, limits: FastLimits): ((context: Record<string, unknown>) => unknown) | undefined {
  const node = compileNode(ast);
  if (node === undefined) return undefined;
  return (context) => node(context, { built: 0, limits });
}

type Ast = Record<string, unknown>;

/** True when `ast` has no key but these: anything else (a predicate, `[]`, a focus, a group) is JSONata's. */
function only(ast: Ast, keys: readonly string[]): boolean {
  for (const key of Object.keys(ast)) if (!keys.includes(key)) return false;
  return true;
}

const LITERAL = ['type', 'value', 'position'];
const NAME = ['type', 'value', 'position'];
const PATH = ['type', 'steps', 'position'];
const BINARY = ['type', 'value', 'position', 'lhs', 'rhs'];
// The parser gives a call a `name` key, undefined for `$f(x)`.
const CALL = ['type', 'value', 'position', 'arguments', 'procedure', 'name'];
const VARIABLE = ['type', 'value', 'position'];

/** The value of an expression that is a lone string, number, boolean or null literal; undefined for any other. */
export function literalOf(node: unknown): { value: unknown } | undefined {
  const ast = node as Ast;
  const literal = ast.type === 'string' || ast.type === 'number' || ast.type === 'value';
  return literal && only(ast, LITERAL) ? { value: ast.value } : undefined;
}

function compileNode(node: unknown): Node | undefined {
  const ast = node as Ast;
  const literal = literalOf(ast);
  if (literal !== undefined) {
    const value = literal.value;
    return (_input, run) => (typeof value === 'string' ? counted(value, run) : value);
  }
  switch (ast.type) {
    case 'path': {
      const steps = ast.steps as Ast[];
      if (!only(ast, PATH) || !Array.isArray(steps) || steps.length === 0) return undefined;
      if (!steps.every((s) => s.type === 'name' && only(s, NAME))) return undefined;
      const keys = steps.map((s) => s.value as string | symbol);
      return (input, run) => path(keys, input, run);
    }
    case 'binary': {
      if (ast.value !== '&' || !only(ast, BINARY)) return undefined;
      const lhs = compileNode(ast.lhs);
      const rhs = compileNode(ast.rhs);
      if (lhs === undefined || rhs === undefined) return undefined;
      return (input, run) => {
        const l = lhs(input, run);
        if (l === SLOW) return SLOW;
        const r = rhs(input, run);
        if (r === SLOW) return SLOW;
        const ls = l === undefined ? '' : scalarText(l);
        const rs = r === undefined ? '' : scalarText(r);
        if (ls === SLOW || rs === SLOW) return SLOW;
        return counted(ls + rs, run);
      };
    }
    case 'function': {
      const procedure = ast.procedure as Ast | undefined;
      const args = ast.arguments as unknown[];
      if (ast.value !== '(' || ast.name !== undefined || !only(ast, CALL) || !Array.isArray(args) || args.length !== 1) return undefined;
      if (procedure?.type !== 'variable' || !only(procedure, VARIABLE)) return undefined;
      const apply = FUNCTIONS[procedure.value as string];
      const arg = compileNode(args[0]);
      if (apply === undefined || arg === undefined) return undefined;
      return (input, run) => {
        const value = arg(input, run);
        if (value === SLOW) return SLOW;
        const result = apply(value);
        return typeof result === 'string' ? counted(result, run) : result;
      };
    }
    default:
      return undefined;
  }
}

/** A string a step produced: counted as the step check counts it, SLOW when near a limit. */
function counted(text: string, run: Run): string | typeof SLOW {
  run.built += text.length;
  // Half the limits: the step check also counts what a step only passes on, which this does not.
  if (text.length > run.limits.maxStringLength / 2 || run.built > run.limits.maxBuiltLength / 2) return SLOW;
  return text;
}

/**
 * JSONata's text of a scalar (jsonata.js `fn.string`, which `&` uses, and hookrelay's
 * `$string`, jsonata-guard.ts, which agree on scalars): numbers to 15 significant digits
 * unless integral, as JSON; SLOW for anything that is not a string, a finite number, a
 * boolean or null.
 */
function scalarText(value: unknown): string | typeof SLOW {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value)) return SLOW;
      return JSON.stringify(Number.isInteger(value) ? value : Number(value.toPrecision(15)));
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return value === null ? 'null' : SLOW;
  }
}

/** The functions of the subset, as JSONata applies them to an evaluated argument (its signature's wrapping included). */
const FUNCTIONS: Record<string, (value: unknown) => unknown> = Object.assign(Object.create(null) as Record<string, (value: unknown) => unknown>, {
  // hookrelay's $string (jsonata-guard.ts): undefined stays undefined.
  string: (value: unknown) => (value === undefined ? undefined : scalarText(value)),
  // `<a<n>:n>`: a number alone is a one-item array; anything but numbers is JSONata's error (T0412).
  sum: (value: unknown) => {
    if (value === undefined) return undefined;
    const items = Array.isArray(value) ? value : [value];
    let total = 0;
    for (const n of items) {
      if (typeof n !== 'number') return SLOW;
      total += n;
    }
    return total;
  },
  // `<a:n>`: nothing counts 0, a non-array 1.
  count: (value: unknown) => (value === undefined ? 0 : Array.isArray(value) ? value.length : 1),
});

/** A sequence (jsonata.js `createSequence`): unwrapped when it holds one item, and flattened into the next step. */
const SEQUENCE = Symbol('hookrelay.jsonata.sequence');
type Sequence = unknown[] & { [SEQUENCE]?: true };

function sequence(): Sequence {
  const s: Sequence = [];
  s[SEQUENCE] = true;
  return s;
}

const isSequence = (value: unknown): boolean => Array.isArray(value) && (value as Sequence)[SEQUENCE] === true;

/** Adds a value to a sequence, an array's items one by one (jsonata.js flattens one level, in `lookup` and `evaluateStep` alike). */
function pushFlat(target: Sequence, value: unknown): void {
  if (Array.isArray(value)) for (const v of value) target.push(v);
  else target.push(value);
}

/** jsonata.js `evaluate()`'s last part: an empty sequence is nothing, a one-item sequence its item. */
function unwrapped(value: unknown): unknown {
  if (!isSequence(value)) return value;
  const s = value as Sequence;
  return s.length === 0 ? undefined : s.length === 1 ? s[0] : s;
}

/** jsonata.js `evaluatePath` and `evaluateStep` for a path of names, from an object input. */
function path(keys: readonly (string | symbol)[], input: unknown, run: Run): unknown {
  let items: unknown[] = Array.isArray(input) ? input : [input];
  let result: unknown[] = items;
  for (let i = 0; i < keys.length; i++) {
    const found: unknown[] = [];
    for (const item of items) {
      const value = lookup(item, keys[i]!, run);
      if (value === SLOW) return SLOW;
      const one = unwrapped(value);
      if (typeof one === 'string' && counted(one, run) === SLOW) return SLOW;
      if (one !== undefined) found.push(one);
    }
    if (i === keys.length - 1 && found.length === 1 && Array.isArray(found[0]) && !isSequence(found[0])) {
      // The last step found one array that is data, not a sequence: it is the result as it is.
      result = found[0] as unknown[];
    } else {
      const flat = sequence();
      for (const value of found) pushFlat(flat, value);
      if (flat.length > run.limits.maxSequenceLength / 2) return SLOW;
      result = flat;
    }
    if (result.length === 0) break;
    items = result;
  }
  const value = unwrapped(result);
  return typeof value === 'string' ? counted(value, run) : value;
}

/**
 * jsonata.js `lookup`: an own property of an object, mapped over an array (its items'
 * values flattened one level into a sequence). SLOW for what did not come from JSON.
 */
function lookup(input: unknown, key: string | symbol, run: Run): unknown {
  if (Array.isArray(input)) {
    const found = sequence();
    for (const item of input) {
      const value = lookup(item, key, run);
      if (value === SLOW) return SLOW;
      if (value !== undefined) pushFlat(found, value);
    }
    return found.length > run.limits.maxSequenceLength / 2 ? SLOW : found;
  }
  if (input === null || typeof input !== 'object') return typeof input === 'function' ? SLOW : undefined;
  if (!hasPlainPrototype(input)) return SLOW;
  if (typeof key !== 'string' || !Object.hasOwn(input, key)) return undefined;
  const value = (input as Record<string, unknown>)[key];
  return typeof value === 'function' ? SLOW : value;
}
