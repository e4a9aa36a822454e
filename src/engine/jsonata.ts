import jsonata from 'jsonata';
import { isPrototypeKey } from './prototype-keys.js';
import { toText } from './to-text.js';

/** A compiled JSONata template field: context in, text out (rejects on a guard trip or an evaluation error). */
export type EvaluateText = (context: Record<string, unknown>) => Promise<string>;

/** Guardrails for one evaluation (STYLE.md principle 8; JSONata's own `timeout`/`stack` options). */
export interface JsonataLimits {
  /** Wall-clock budget of one evaluation. JSONata never yields to the event loop, so keep it short. */
  timeoutMs: number;
  /** Maximum nesting of JSONata's evaluator: stops non-tail recursion long before the JS stack. */
  maxDepth: number;
}

/** Defaults until the config schema grows `hooks.jsonata` settings. */
export const DEFAULT_JSONATA_LIMITS: Readonly<JsonataLimits> = Object.freeze({ timeoutMs: 250, maxDepth: 500 });

// Name steps are looked up with hasOwnProperty, so a Symbol key never matches any JSON data.
const NEVER = Symbol('hookrelay.never');

/**
 * Compiles a JSONata expression once (at load); throws an Error with the position on a
 * syntax error. JSONata only reads own properties, so `constructor` and `prototype` never
 * reach the prototype chain; in addition every name step spelling `__proto__`,
 * `prototype` or `constructor` is made unresolvable and `$lookup` refuses those keys, so
 * own keys of those names never resolve by name either.
 */
export function compileJsonata(source: string, limits: JsonataLimits = DEFAULT_JSONATA_LIMITS): EvaluateText {
  let expression: jsonata.Expression;
  try {
    expression = jsonata(source, { timeout: limits.timeoutMs, stack: limits.maxDepth });
  } catch (err) {
    const e = err as { message?: string; position?: number };
    throw new Error(`JSONata syntax error at position ${e.position ?? 0}: ${e.message ?? String(err)}`);
  }
  neutralisePrototypeNames(expression.ast());
  expression.registerFunction('lookup', safeLookup, '<x-s:x>');
  return async (context) => toText(await expression.evaluate(context));
}

/** JSONata's `$lookup` (same array semantics), refusing prototype keys. */
function safeLookup(this: jsonata.Focus, input: unknown, key: string): unknown {
  if (isPrototypeKey(key)) return undefined;
  if (Array.isArray(input)) {
    // The focus of a native function carries createSequence (jsonata.js applyInner), untyped.
    const sequence = (this as unknown as { createSequence(): unknown[] }).createSequence();
    for (const entry of input) {
      const value = safeLookup.call(this, entry, key);
      if (value === undefined) continue;
      if (Array.isArray(value)) sequence.push(...value);
      else sequence.push(value);
    }
    return sequence;
  }
  if (input === null || typeof input !== 'object' || !Object.hasOwn(input, key)) return undefined;
  return (input as Record<string, unknown>)[key];
}

/** Walks the parsed expression (once, at load) and points prototype-named steps at nothing. */
function neutralisePrototypeNames(root: unknown): void {
  const stack: unknown[] = [root];
  const seen = new Set<object>(); // the parent operator (`%`) shares nodes between branches
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    const record = node as Record<string, unknown>;
    if (record.type === 'name' && isPrototypeKey(record.value)) record.value = NEVER;
    for (const key of Object.keys(record)) stack.push(record[key]);
  }
}
