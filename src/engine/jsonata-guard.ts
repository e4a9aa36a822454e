import type jsonata from 'jsonata';
import { linearRegExp } from './linear-regexp.js';
import { isPrototypeKey } from './prototype-keys.js';

// What the step budget (jsonata-budget.ts) and JSONata's `stack` option do not cover: work
// inside one step, whose sizes a payload chooses (a built-in building a huge string, a regex
// backtracking for seconds). STYLE.md principle 8.

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

/** JSONata's `RegexEngine` option: the same regex on the linear-time engine. */
export function LinearRegExp(pattern: RegExp): RegExp {
  return linearRegExp(pattern.source, pattern.flags);
}

// Name steps are looked up with hasOwnProperty, so a Symbol key never matches any JSON data.
const NEVER = Symbol('hookrelay.never');

/** At load: name steps spelling a prototype key resolve to nothing; `$eval` and non-linear regexes are refused. */
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

function checkLinear(regex: RegExp, position: number | undefined): void {
  try {
    LinearRegExp(regex);
  } catch (err) {
    throw new Error(`JSONata regex /${regex.source}/ at position ${position ?? 0} ${(err as Error).message}`);
  }
}

// Characters built so far, on the evaluation's own environment (a fresh `base` per evaluate()).
const BUILT = Symbol('hookrelay.built');

/** Run after every step: no string past `maxStringLength`, no more than `maxBuiltLength` characters built in one evaluation. */
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

  function join(strs: string[] | undefined, separator?: string): string | undefined {
    if (strs === undefined) return undefined;
    const sep = separator ?? '';
    let total = sep.length * Math.max(0, strs.length - 1);
    for (const s of strs) total += s.length;
    if (total > maxStringLength) throw tooLong('$join', maxStringLength);
    return strs.join(sep);
  }

  function string(arg: unknown, prettify = false): string | undefined {
    if (arg === undefined) return undefined;
    if (typeof arg === 'string') return arg;
    if (isJsonataFunction(arg)) return '';
    if (typeof arg === 'number' && !Number.isFinite(arg)) throw { code: 'D3001', value: arg, stack: new Error().stack };
    let value = arg;
    if (Array.isArray(value) && (value as { outerWrapper?: boolean }).outerWrapper) value = value[0];
    if (value === null || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(jsonataReplacer('', value));
    if (jsonExceeds(value, maxStringLength, prettify ? 2 : 0)) throw tooLong('$string', maxStringLength);
    return JSON.stringify(value, jsonataReplacer, prettify ? 2 : 0);
  }

  return [
    ['pad', pad, '<s-ns?:s>'],
    ['join', join, '<a<s>s?:s>'],
    ['string', string, '<x-b?:s>'],
    ['distinct', distinct, '<x:x>'],
    ['sort', sort, '<af?:a>'],
    ['eval', () => { throw new JsonataGuardError('eval_refused', '$eval is not allowed: payloads must never supply code'); }, '<sx?:x>'],
  ];
}

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

/** Whether `value`'s JSON text would pass `limit`: a lower estimate, O(limit) at most, nothing built. */
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

function distinct(this: Focus, arr: unknown): unknown {
  if (arr === undefined) return undefined;
  if (!Array.isArray(arr) || arr.length <= 1) return arr;
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

/** JSONata's `$sort` (same results, stable) in O(n log n) time and O(n) memory: JSONata's own recurses on `array.slice(1)` without returning to the evaluator, so no guard runs. */
async function sort(arr: unknown[] | undefined, comparator?: (a: unknown, b: unknown) => unknown): Promise<unknown[] | undefined> {
  if (arr === undefined) return undefined;
  if (arr.length <= 1) return arr;
  if (comparator === undefined) {
    const numbers = arr.every((v) => typeof v === 'number' && !Number.isNaN(v));
    if (!numbers && !arr.every((v) => typeof v === 'string')) throw { code: 'D3070', index: 1, stack: new Error().stack };
    if (numbers && arr.some((v) => !Number.isFinite(v as number))) throw { code: 'D1001', value: arr.find((v) => !Number.isFinite(v as number)), stack: new Error().stack };
    return arr.slice().sort((a, b) => ((a as number) > (b as number) ? 1 : (a as number) < (b as number) ? -1 : 0));
  }
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
