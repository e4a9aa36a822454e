/** Prototype safety. `__proto__`, `prototype` and `constructor` never resolve in templates (CONTRACT.md §6), and parsed bodies lose them before they reach the engine. */

const PROTOTYPE_KEYS = ['__proto__', 'prototype', 'constructor'] as const;

/** True for the three keys that must never resolve: `__proto__`, `prototype`, `constructor`. */
export function isPrototypeKey(key: unknown): boolean {
  return key === '__proto__' || key === 'prototype' || key === 'constructor';
}

/** Deletes own `__proto__`, `prototype` and `constructor` keys from a parsed JSON value, at every depth, in place, and returns the value. */
export function dropPrototypeKeys<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      for (const item of current) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    const record = current as Record<string, unknown>;
    for (const key of PROTOTYPE_KEYS) delete record[key];
    for (const key of Object.keys(record)) {
      const child = record[key];
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return value;
}

/** A shallow copy of a plain object without prototype keys, or the value itself when it has none (the usual case: three `hasOwn` checks, no allocation). */
export function withoutPrototypeKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  if (!Object.hasOwn(record, '__proto__') && !Object.hasOwn(record, 'prototype') && !Object.hasOwn(record, 'constructor')) {
    return value;
  }
  return copyWithoutPrototypeKeys(record);
}

/** A shallow copy of `record` without prototype keys. */
export function copyWithoutPrototypeKeys(record: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (!isPrototypeKey(key)) copy[key] = record[key];
  }
  return copy;
}
