import { randomUUID } from 'node:crypto';
import jsonata from 'jsonata';
import { BUDGET_BINDING, spendStep, type StepBudget } from './jsonata-budget.js';
import { guardedFunctions, inspectExpression, jsonExceeds, LinearRegExp, stepCheck, tooLong } from './jsonata-guard.js';
import { isPrototypeKey } from './prototype-keys.js';
import { toText } from './to-text.js';

/** A compiled JSONata template field: context in, text out. `budget`: the request's steps, shared by all its evaluations; without it the evaluation has `maxSteps` of its own. */
export type EvaluateText = (context: Record<string, unknown>, budget?: StepBudget) => Promise<string>;

/** Guardrails for one evaluation (STYLE.md principle 8; JSONata's own `stack`/`sequence` options). */
export interface JsonataLimits {
  maxSteps: number;
  maxDepth: number;
  maxStringLength: number;
  maxBuiltLength: number;
  maxSequenceLength: number;
}

/** Defaults until the config schema grows `hooks.jsonata` settings. */
export const DEFAULT_JSONATA_LIMITS: Readonly<JsonataLimits> = Object.freeze({
  maxSteps: 100_000,
  maxDepth: 500,
  maxStringLength: 1_048_576,
  maxBuiltLength: 16_777_216,
  maxSequenceLength: 1_000_000,
});

// JSONata calls the function bound to this symbol after every step and awaits what it returns.
const STEP_EXIT = Symbol.for('jsonata.__evaluate_exit');

/** Compiles an expression at load; throws saying what to change on a syntax error, `$eval` or a regex that is not linear-time. */
export function compileJsonata(source: string, limits: Partial<JsonataLimits> = DEFAULT_JSONATA_LIMITS): EvaluateText {
  const { maxStringLength } = { ...DEFAULT_JSONATA_LIMITS, ...limits };
  const evaluate = compileJsonataValue(source, limits);
  return async (context: Record<string, unknown>, budget?: StepBudget) => {
    const value = await evaluate(context, budget);
    if (value !== null && typeof value === 'object' && jsonExceeds(value, maxStringLength)) throw tooLong('the rendered text', maxStringLength);
    const text = toText(value);
    if (text.length > maxStringLength) throw tooLong('the rendered text', maxStringLength);
    return text;
  };
}

/** `source` parsed (a syntax error as one line with its position), inspected and guarded: its value, not text (a mapping's `match.when`). */
export function compileJsonataValue(source: string, limits: Partial<JsonataLimits> = DEFAULT_JSONATA_LIMITS): (context: Record<string, unknown>, budget?: StepBudget) => Promise<unknown> {
  const { maxSteps, maxDepth, maxStringLength, maxBuiltLength, maxSequenceLength } = { ...DEFAULT_JSONATA_LIMITS, ...limits };
  let expression: jsonata.Expression;
  try {
    expression = jsonata(source, {
      stack: maxDepth,
      sequence: maxSequenceLength,
      RegexEngine: LinearRegExp as unknown as RegExpConstructor,
    });
  } catch (err) {
    const e = err as { message?: string; position?: number };
    throw new Error(`JSONata syntax error at position ${e.position ?? 0}: ${e.message ?? String(err)}`);
  }
  inspectExpression(expression.ast());
  expression.registerFunction('lookup', safeLookup, '<x-s:x>');
  // A fresh session per call for an item that names none (CONTRACT.md §7).
  expression.registerFunction('uuid', () => randomUUID(), '<:s>');
  for (const [name, fn, signature] of guardedFunctions(maxStringLength)) expression.registerFunction(name, fn, signature);
  const sizes = stepCheck(maxStringLength, maxBuiltLength);
  expression.assign(STEP_EXIT as unknown as string, (expr: unknown, input: unknown, environment: Parameters<typeof sizes>[2] & Parameters<typeof spendStep>[0], result: unknown) => {
    sizes(expr, input, environment, result);
    return spendStep(environment, maxSteps);
  });
  return (context, budget = { left: maxSteps }) => expression.evaluate(context, { [BUDGET_BINDING]: budget });
}

function safeLookup(this: jsonata.Focus, input: unknown, key: string): unknown {
  if (isPrototypeKey(key)) return undefined;
  if (Array.isArray(input)) {
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
