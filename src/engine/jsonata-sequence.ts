const STEP_ENTRY = Symbol.for('jsonata.__evaluate_entry');

interface Environment {
  base: { createSequence(...items: unknown[]): unknown[]; bind(name: unknown, value: unknown): void };
}

/** JSONata's `sequence` guard (no sequence longer than `maxSequenceLength`: error D2015), with the same checks and errors, made cheap. */
export function sequenceGuard(maxSequenceLength: number): [symbol, (expr: unknown, input: unknown, environment: Environment) => void] {
  function push(this: unknown[], ...items: unknown[]): number {
    if (this.length + items.length > maxSequenceLength) throw { code: 'D2015', stack: new Error().stack, value: maxSequenceLength };
    return Array.prototype.push.apply(this, items);
  }
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
