import type jsonata from 'jsonata';
import { linearRegExp } from './linear-regexp.js';
import { isPrototypeKey } from './prototype-keys.js';

/**
 * What the step budget (jsonata-budget.ts) and JSONata's own `stack` guardrail (jsonata 2.2,
 * checked by jsonata.js `evaluate()` on entering each step) do not cover: work done inside one step. A
 * built-in can build a string of any size or run a regex for seconds in a single step, and a
 * payload chooses the sizes. Here regexes run on a linear-time engine, the built-ins that can
 * amplify are sized before they build or replaced by linear ones, every step's string is
 * bounded and so is the sum of the strings one evaluation builds (a large payload string
 * copied once per array item would otherwise fill the heap within the time budget), and code
 * from payloads is refused.
 */

/** A guard trip: an ordinary evaluation error (500 transform_failed); never carries payload text. */
export class JsonataGuardError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'JsonataGuardError';
    this.code = code;
  }
}

/** The error of a string past `maxStringLength`; `what` names the step, never its content. */
export function tooLong(what: string, limit: number): JsonataGuardError {
  return new JsonataGuardError('string_too_long', `${what} would exceed maxStringLength (${limit} characters); bound the sizes the template builds from the payload`);
}

/**
 * JSONata's `RegexEngine` option: JSONata calls `new RegexEngine(regexLiteral)` at each
 * evaluation of a regex and then drives `lastIndex`/`exec`; this returns the same regex on
 * the linear-time engine. Every literal was checked at load (`inspectExpression`).
 */
export function LinearRegExp(pattern: RegExp): RegExp {
  return linearRegExp(pattern.source, pattern.flags);
}

// Name steps are looked up with hasOwnProperty, so a Symbol key never matches any JSON data.
const NEVER = Symbol('hookrelay.never');

/**
 * The one load-time walk over a parsed expression: points name steps spelling a prototype key
 * at nothing, and refuses `$eval` and regexes that cannot run in linear time (throws an Error
 * saying what to change).
 */
export function inspectExpression(root: unknown): void {
  const stack: unknown[] = [root];
  const seen = new Set<object>(); // the parent operator (`%`) shares nodes between branches
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || seen.has(node) || node instanceof RegExp) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    const record = node as Record<string, unknown>;
    if (record.type === 'name' && isPrototypeKey(record.value)) record.value = NEVER;
    if (record.type === 'variable' && record.value === 'eval') {
      throw new Error('$eval is not allowed: expressions are compiled and checked at load, and payloads must never supply code; write the expression itself into the template');
    }
    if (record.type === 'regex') checkLinear(record.value as RegExp, record.position as number | undefined);
    for (const key of Object.keys(record)) stack.push(record[key]);
  }
}

/** Throws a config error naming why a regex literal cannot run on the linear-time engine. */
function checkLinear(regex: RegExp, position: number | undefined): void {
  try {
    LinearRegExp(regex);
  } catch (err) {
    throw new Error(`JSONata regex /${regex.source}/ at position ${position ?? 0} ${(err as Error).message}`);
  }
}

// Characters of every string a step of one evaluation produced, kept on that evaluation's
// own environment (JSONata makes a fresh `environment.base` per evaluate() and points every
// frame of it there).
const BUILT = Symbol('hookrelay.built');

/**
 * The check JSONata runs after every step (bound to `Symbol.for('jsonata.__evaluate_exit')`):
 * no string past `maxStringLength`, and no more than `maxBuiltLength` characters of strings in
 * one evaluation (strings a step only passes on count too, so the budget is generous).
 * Cheap next to the evaluation it guards (measured: see docs/performance.md).
 */
export function stepCheck(maxStringLength: number, maxBuiltLength: number) {
  return (_expr: unknown, _input: unknown, environment: { base: { [BUILT]?: number } }, result: unknown): void => {
    if (typeof result !== 'string') return;
    if (result.length > maxStringLength) throw tooLong('a step', maxStringLength);
    const base = environment.base;
    const built = (base[BUILT] ?? 0) + result.length;
    if (built > maxBuiltLength) {
      throw new JsonataGuardError('built_too_much', `one evaluation would build more than ${maxBuiltLength} characters of text (maxBuiltLength); bound the work the template does per payload item`);
    }
    base[BUILT] = built;
  };
}

type Focus = jsonata.Focus;
type NativeFunction = (this: Focus, ...args: any[]) => unknown;

/** The built-ins that replace JSONata's own in every compiled expression, with their JSONata signatures. */
export function guardedFunctions(maxStringLength: number): [string, NativeFunction, string][] {
  /**
   * JSONata's `$pad` (same results: positive width pads right, negative left, default
   * padding ' ', widths in code points, a longer padding string cut to fit), refusing a width
   * past the limit before building anything.
   */
  function pad(str: string | undefined, width: number, char?: string): string | undefined {
    if (str === undefined) return undefined;
    const padding = char === undefined || char.length === 0 ? ' ' : char;
    const target = Math.abs(Math.trunc(width));
    const padLength = target - codePointLength(str);
    if (!(padLength > 0)) return str;
    if (target > maxStringLength) throw tooLong('$pad', maxStringLength);
    const unit = [...padding];
    const built = padding.repeat(Math.floor(padLength / unit.length)) + unit.slice(0, padLength % unit.length).join('');
    return width > 0 ? str + built : built + str;
  }

  /** JSONata's `$join`, refusing a result past the limit before building it. */
  function join(strs: string[] | undefined, separator?: string): string | undefined {
    if (strs === undefined) return undefined;
    const sep = separator ?? '';
    let total = sep.length * Math.max(0, strs.length - 1);
    for (const s of strs) total += s.length;
    if (total > maxStringLength) throw tooLong('$join', maxStringLength);
    return strs.join(sep);
  }

  /** JSONata's `$string` (same output), refusing JSON text past the limit before building it. */
  function string(arg: unknown, prettify = false): string | undefined {
    if (arg === undefined) return undefined;
    if (typeof arg === 'string') return arg;
    if (isJsonataFunction(arg)) return '';
    if (typeof arg === 'number' && !Number.isFinite(arg)) throw { code: 'D3001', value: arg, stack: new Error().stack };
    let value = arg;
    if (Array.isArray(value) && (value as { outerWrapper?: boolean }).outerWrapper) value = value[0];
    if (jsonExceeds(value, maxStringLength, prettify ? 2 : 0)) throw tooLong('$string', maxStringLength);
    return JSON.stringify(value, jsonataReplacer, prettify ? 2 : 0);
  }

  return [
    ['pad', pad, '<s-ns?:s>'],
    ['join', join, '<a<s>s?:s>'],
    ['string', string, '<x-b?:s>'],
    ['distinct', distinct, '<x:x>'],
    ['sort', sort, '<af?:a>'],
    // Refused at load already; this catches any indirect way to the name.
    ['eval', () => { throw new JsonataGuardError('eval_refused', '$eval is not allowed: payloads must never supply code'); }, '<sx?:x>'],
  ];
}

/** JSONata's `$string` replacer: numbers to 15 significant digits, functions as ''. */
function jsonataReplacer(_key: string, val: unknown): unknown {
  if (typeof val === 'number') {
    if (Number.isNaN(val)) return val;
    if (!Number.isFinite(val)) throw { code: 'D1001', value: val, stack: new Error().stack };
    return Number.isInteger(val) ? val : Number(val.toPrecision(15));
  }
  return val && isJsonataFunction(val) ? '' : val;
}

function isJsonataFunction(value: unknown): boolean {
  if (typeof value === 'function') return true;
  const record = value as { _jsonata_function?: unknown; _jsonata_lambda?: unknown } | null;
  return typeof value === 'object' && record !== null && (record._jsonata_function === true || record._jsonata_lambda === true);
}

function codePointLength(str: string): number {
  let n = 0;
  for (const _ of str) n++;
  return n;
}

/**
 * True when the JSON text of `value` (indented by `indent` when pretty) would be longer than
 * `limit`. Estimated from below (strings and keys by length, anything else by one
 * character) without building anything, and stopping as soon as it is past `limit`, so it
 * costs at most O(limit) even for a structure that shares one big string many times; the
 * text itself is checked again once built.
 */
export function jsonExceeds(value: unknown, limit: number, indent = 0): boolean {
  let size = 0;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    size += 1 + indent * depth;
    if (typeof v === 'string') size += v.length + 1;
    else if (v !== null && typeof v === 'object' && !isJsonataFunction(v)) {
      if (Array.isArray(v)) {
        for (const item of v) {
          values.push(item);
          depths.push(depth + 1);
        }
      } else {
        for (const key of Object.keys(v)) {
          size += key.length + 3;
          values.push((v as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
      }
    }
    if (size > limit) return true;
  }
  return false;
}

/**
 * JSONata's `$distinct` in linear time. JSONata compares each item with every kept one
 * (deepEquals, O(n²): 40 k items block for seconds). Same results for JSON values: two values
 * are equal when their ids from {@link valueIds} are; the first occurrence is kept, and a
 * sequence stays one.
 */
function distinct(this: Focus, arr: unknown): unknown {
  if (arr === undefined) return undefined;
  if (!Array.isArray(arr) || arr.length <= 1) return arr;
  // The focus of a native function carries createSequence (jsonata.js applyInner), untyped.
  const results = (arr as { sequence?: boolean }).sequence === true ? (this as unknown as { createSequence(): unknown[] }).createSequence() : [];
  const idOf = valueIds();
  const seen = new Set<number>();
  for (const value of arr) {
    const id = idOf(value);
    if (seen.has(id)) continue;
    seen.add(id);
    results.push(value);
  }
  return results;
}

/**
 * Numbers JSON values by deep equality: equal scalars (`===`; 0 and -0 alike) and arrays or
 * objects with equal members (object keys in any order) get one id. An array's or object's id
 * comes from its members' ids, computed once per object (memoised by identity, iteratively),
 * so a structure shared or repeated across the items costs nothing more and every key stays
 * short. Functions are equal only to themselves.
 */
function valueIds(): (value: unknown) => number {
  const byKey = new Map<string, number>();
  const byObject = new Map<object, number>();
  const intern = (key: string): number => {
    let id = byKey.get(key);
    if (id === undefined) byKey.set(key, (id = byKey.size));
    return id;
  };
  const isStructure = (v: unknown): v is object => v !== null && typeof v === 'object' && !isJsonataFunction(v);
  const scalarId = (v: unknown): number => {
    if (typeof v === 'function' || (v !== null && typeof v === 'object')) {
      let id = byObject.get(v as object);
      if (id === undefined) byObject.set(v as object, (id = intern(`f${byObject.size}`)));
      return id;
    }
    return intern(typeof v === 'string' ? `s${v}` : typeof v === 'number' ? `n${v === 0 ? 0 : v}` : String(v));
  };
  const memberId = (v: unknown): number => (isStructure(v) ? byObject.get(v)! : scalarId(v));
  return (root) => {
    if (!isStructure(root)) return scalarId(root);
    const stack: object[] = [root];
    while (stack.length > 0) {
      const node = stack[stack.length - 1]!;
      if (byObject.has(node)) {
        stack.pop();
        continue;
      }
      const keys = Array.isArray(node) ? undefined : Object.keys(node).sort();
      const members: unknown[] = keys ? keys.map((k) => (node as Record<string, unknown>)[k]) : (node as unknown[]);
      const waiting = members.filter((m): m is object => isStructure(m) && !byObject.has(m));
      if (waiting.length > 0) {
        stack.push(...waiting);
        continue;
      }
      const ids = members.map(memberId);
      byObject.set(node, intern(keys ? `o${keys.map((k, i) => `${JSON.stringify(k)}:${ids[i]}`).join(',')}` : `a${ids.join(',')}`));
      stack.pop();
    }
    return byObject.get(root)!;
  };
}

/**
 * JSONata's `$sort` (same results: stable; without a comparator only all-number or all-string
 * arrays, ascending; with one, `comparator(a, b)` true puts b first), in O(n log n) time and
 * O(n) memory. JSONata's own merges by recursing on `array.slice(1)`: O(n²) memory, and with the
 * default comparator it never returns to the evaluator, so its guards never run — 40 k
 * numbers took 18 s and 3.4 GB. A comparator given by the template is a JSONata function, so
 * each call of it spends the step budget.
 */
async function sort(arr: unknown[] | undefined, comparator?: (a: unknown, b: unknown) => unknown): Promise<unknown[] | undefined> {
  if (arr === undefined) return undefined;
  if (arr.length <= 1) return arr;
  if (comparator === undefined) {
    const numbers = arr.every((v) => typeof v === 'number' && !Number.isNaN(v));
    if (!numbers && !arr.every((v) => typeof v === 'string')) throw { code: 'D3070', index: 1, stack: new Error().stack };
    if (numbers && arr.some((v) => !Number.isFinite(v as number))) throw { code: 'D1001', value: arr.find((v) => !Number.isFinite(v as number)), stack: new Error().stack };
    // Array.prototype.sort is stable (ES2019); JSONata keeps equal items in order too.
    return arr.slice().sort((a, b) => ((a as number) > (b as number) ? 1 : (a as number) < (b as number) ? -1 : 0));
  }
  // Bottom-up merge sort over two buffers: a pair is swapped only when the comparator says so.
  let from = arr.slice();
  let to: unknown[] = new Array(arr.length);
  for (let width = 1; width < from.length; width *= 2) {
    for (let lo = 0; lo < from.length; lo += 2 * width) {
      const mid = Math.min(lo + width, from.length);
      const hi = Math.min(lo + 2 * width, from.length);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) to[k++] = (await comparator(from[i], from[j])) ? from[j++] : from[i++];
      while (i < mid) to[k++] = from[i++];
      while (j < hi) to[k++] = from[j++];
    }
    [from, to] = [to, from];
  }
  return from;
}
