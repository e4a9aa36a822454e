import { JsonataGuardError } from './jsonata-guard.js';

// The work JSONata may do for one request, in evaluation steps (the same on any machine),
// shared by all its template evaluations. JSONata's own `timeout` measures wall time, which
// interleaved evaluations share: a batch would pass or fail by the load it meets (CONTRACT.md §7).

/** What is left of one request's steps; shared by its evaluations. */
export interface StepBudget {
  left: number;
}

/** The binding the budget travels in; with a space, no JSONata variable can spell it. */
export const BUDGET_BINDING = 'hookrelay step budget';

const BUDGET = Symbol('hookrelay.budget');
const STEP_ENTRY = Symbol.for('jsonata.__evaluate_entry');

interface Environment {
  base: { [BUDGET]?: StepBudget; lookup(name: string): unknown; createSequence(...items: unknown[]): unknown[]; bind(name: unknown, value: unknown): void };
}

/** JSONata's step hook: spends a step, and past a slice ({@link SLICE_MS}) returns the event loop's next turn for JSONata to await. */
export function spendStep(environment: Environment, maxSteps: number): Promise<void> | undefined {
  const base = environment.base;
  const budget = (base[BUDGET] ??= base.lookup(BUDGET_BINDING) as StepBudget);
  spend(budget, maxSteps);
  return pace();
}

/** Spends one step of `budget`; throws `too_many_steps` once it is spent. */
export function spend(budget: StepBudget, maxSteps: number): void {
  if (--budget.left < 0) {
    throw new JsonataGuardError('too_many_steps', `the JSONata of one request would take more than ${maxSteps} evaluation steps (maxSteps): bound the work an expression does per payload item, e.g. no loop over a payload array inside a forEach item`);
  }
}

// JSONata awaits every step on settled promises, so a long evaluation never lets the listener
// read a request: once a slice has passed, evaluations wait for the next turn of the event loop
// (CONTRACT.md §8: no template blocks the listener for more than about 100 ms).
const SLICE_MS = 10;
let sliceEnd = 0;
let turn: Promise<void> | undefined;

function pace(): Promise<void> | undefined {
  const now = performance.now();
  if (turn === undefined) {
    sliceEnd = now + SLICE_MS;
    turn = new Promise((resolve) => setImmediate(() => {
      turn = undefined;
      resolve();
    }));
    return undefined;
  }
  return now < sliceEnd ? undefined : turn;
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
