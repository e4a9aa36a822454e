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


/** JSONata's step hook: spends a step, and past a slice ({@link SLICE_MS}) returns the event loop's next turn for JSONata to await. */
export function spendStep(environment: { lookup(name: string): unknown }, maxSteps: number): Promise<void> | undefined {
  const budget = environment.lookup(BUDGET_BINDING) as StepBudget;
  if (--budget.left < 0) {
    throw new JsonataGuardError('too_many_steps', `the JSONata of one request would take more than ${maxSteps} evaluation steps (maxSteps): bound the work an expression does per payload item, e.g. no loop over a payload array inside a forEach item`);
  }
  return pace();
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
