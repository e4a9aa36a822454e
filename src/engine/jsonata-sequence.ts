// JSONata calls the function bound to this symbol (awaited) on entering every evaluation step.
const STEP_ENTRY = Symbol.for('jsonata.__evaluate_entry');

/** The part of a JSONata evaluation's environment the hook below touches (jsonata.js `evaluate`). */
interface Environment {
  base: { createSequence(...items: unknown[]): unknown[]; bind(name: unknown, value: unknown): void };
}

/**
 * JSONata's `sequence` guard (no sequence longer than `maxSequenceLength`: error D2015), with
 * the same checks and errors, made cheap. With the `sequence` option jsonata.js gives every
 * sequence it makes — several per step — a `push` closure of its own, and those closures made
 * a short evaluation cost about 85 µs of CPU instead of 55 and had V8 promote three times as
 * many of its objects to the old generation (measured: see docs/performance.md), which is
 * what the gateway's memory grew by under JSONata load. Here every sequence shares one
 * `push`: bound as the entry hook, this replaces the evaluation's `createSequence` at its first
 * step and then unbinds itself for the rest of that evaluation (JSONata looks the hook up per
 * step, own bindings first), so the other steps do not wait on it. The `sequence` option
 * stays set: JSONata's range and `$append` read it too.
 */
export function sequenceGuard(maxSequenceLength: number): [symbol, (expr: unknown, input: unknown, environment: Environment) => void] {
  function push(this: unknown[], ...items: unknown[]): number {
    if (this.length + items.length > maxSequenceLength) throw { code: 'D2015', stack: new Error().stack, value: maxSequenceLength };
    return Array.prototype.push.apply(this, items);
  }
  // jsonata.js's own createSequence with the shared push; JSONata calls it with one argument
  // (wraps it) or none.
  function createSequence(...items: unknown[]): unknown[] {
    const sequence = [] as unknown[] & { sequence?: boolean };
    sequence.push = push;
    sequence.sequence = true;
    if (items.length === 1) sequence.push(items[0]);
    return sequence;
  }
  return [STEP_ENTRY, (_expr, _input, environment) => {
    environment.base.createSequence = createSequence;
    environment.base.bind(STEP_ENTRY, undefined);
  }];
}
